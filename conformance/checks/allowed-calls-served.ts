import type { Exchange } from '../model/suite-request.ts';
import { checkOnce } from './check-cases.ts';
import {
  type Check,
  type CheckContext,
  CheckFailure,
  describeResponse,
  type Endpoint,
} from './check-contract.ts';
import { requestFor, VALID_TOKEN } from './support.ts';

/** Without a Retry-After, the one long wait lasts this long (a minute covers most rate-limit windows). */
const LONG_WAIT_WITHOUT_RETRY_AFTER_MS = 60_000;
/** How often a long wait says it is still waiting. */
const PROGRESS_EVERY_MS = 15_000;

/** Waits `ms`, saying so now and then: a CI log must not look hung. */
async function waitWithProgress(ctx: CheckContext, ms: number, what: string): Promise<void> {
  ctx.log(`  ${what}: waiting ${Math.ceil(ms / 1000)} s once before judging it never served`);
  for (let left = ms; left > 0; left -= PROGRESS_EVERY_MS) {
    await ctx.sleep(Math.min(left, PROGRESS_EVERY_MS));
    if (left > PROGRESS_EVERY_MS)
      ctx.log(`  ... still waiting (${Math.ceil((left - PROGRESS_EVERY_MS) / 1000)} s left)`);
  }
}

/** Why a call the valid token may make was not served, as a failure that says what to do. */
/** The names of the tools the run checks. */
const toolNames = (ctx: CheckContext) => ctx.tools.map((t) => t.name);

/** The flag that sets a tool's body: the spec's two have their own, any tool takes `--tool NAME=PATH=BODY`. */
function bodyFlag(tool: string, ctx: CheckContext): string {
  const own = { 'web.search': '--search-body', 'web.fetch': '--fetch-body' }[tool];
  const path = ctx.endpoints[tool]?.path ?? '/v1/...';
  return `${own ? `${own} or ` : ''}--tool '${tool}=${path}={...}'`;
}

function notServed(ctx: CheckContext, endpoint: Endpoint, exchange: Exchange): CheckFailure {
  const call = `${endpoint.method} ${endpoint.path} with the valid token`;
  const expected = `2xx for ${call} (spec §4 rule 2, §5: a valid token within its level is served)`;
  const { status } = exchange.response;
  if (exchange.rateLimitExhausted) {
    const asked =
      exchange.retryAfterMs !== undefined
        ? `Retry-After ${Math.ceil(exchange.retryAfterMs / 1000)} s`
        : 'no Retry-After';
    return new CheckFailure({
      expected,
      actual: `only 429 (${asked}), also after the suite waited (--max-wait-seconds ${ctx.maxWaitSeconds} each time, and once up to ${ctx.longWaitSeconds} s): the gateway never served it`,
      fix: 'a gateway that serves nothing cannot be judged, nor pass: check the limiter (a limit of 0, a window that never ends, every caller sharing one key); if a previous run used up the quota, run again once it has recovered',
      exchange,
      unobserved: 'not-served',
    });
  }
  const tool = endpoint.name === 'whoami' ? undefined : endpoint.name;
  if (status === 401 || status === 403) {
    return new CheckFailure({
      expected,
      actual: describeResponse(exchange),
      fix: tool
        ? `serve every verified caller whose tier or allowlist includes ${tool}, on every call; if the token given to the suite may not call ${tool}, say so with --allowed-tools ${
            toolNames(ctx)
              .filter((t) => t !== tool)
              .join(',') || 'none'
          } (--token must be a token allowed to call every tool checked)`
        : 'answer whoami 200 for every valid token, whatever its tier (spec §4 rule 2)',
      exchange,
    });
  }
  return new CheckFailure({
    expected,
    actual: describeResponse(exchange),
    fix: tool
      ? `serve the call; if the gateway expects other fields in the body of ${tool} (they are "not shown" in the spec), give a valid one with ${bodyFlag(tool, ctx)}`
      : "answer whoami 200 with the caller's identity for every valid token",
    exchange,
  });
}

export const allowedCallsServed: Check = {
  id: 'authz.allowed-calls-served',
  title: 'The valid token is served: whoami and each tool it may call answer 2xx',
  specRef: [
    { section: 4, rules: [2] },
    { section: 5, rules: [2, 4] },
  ],
  level: 'MUST',
  needs: ['token'],
  // Early in the run, so that a gateway that serves nothing fails here, by name, instead of every later
  // check going inconclusive. A quota used up before the run starts is waited out once, within bounds.
  run: (ctx) =>
    checkOnce(ctx, async () => {
      let longWaitLeft = true;
      const served: string[] = [];
      for (const endpoint of ctx.servedEndpoints) {
        const request = requestFor(endpoint, { token: VALID_TOKEN });
        let exchange = await ctx.client.send(request);
        if (exchange.rateLimitExhausted && longWaitLeft) {
          const wait = exchange.retryAfterMs ?? LONG_WAIT_WITHOUT_RETRY_AFTER_MS;
          if (wait <= ctx.longWaitSeconds * 1000) {
            longWaitLeft = false;
            await waitWithProgress(
              ctx,
              wait + 100,
              `${endpoint.method} ${endpoint.path} answered 429 beyond --max-wait-seconds ${ctx.maxWaitSeconds}`,
            );
            exchange = await ctx.client.send(request);
          }
        }
        const { status } = exchange.response;
        if (exchange.rateLimitExhausted || status < 200 || status >= 300)
          throw notServed(ctx, endpoint, exchange);
        served.push(`${endpoint.name} ${status}`);
      }
      const narrowed = toolNames(ctx).filter((tool) => !ctx.allowedTools.includes(tool));
      const skipped =
        narrowed.length > 0
          ? `; ${narrowed.join(' and ')} skipped, not checked: outside --allowed-tools ${ctx.allowedTools.join(',') || 'none'}`
          : '';
      return `served: ${served.join(', ')}${skipped}`;
    }),
};
