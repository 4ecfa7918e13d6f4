import { redactTokens } from '../../vocabulary/redact.ts';
import {
  type Check,
  type CheckContext,
  type CheckOutcome,
  describeCall,
  describeResponse,
  repeatRefusedFix,
} from '../checks/check-contract.ts';
import { carriedIdempotencyKey } from '../client/client-idempotency-key.ts';
import { reproductionOf } from '../client/recorded-exchange.ts';
import { CannotRunError } from '../model/cannot-run-error.ts';
import type { CheckResult, ExchangeRecord } from '../model/check-result.ts';
import type { Exchange } from '../model/suite-request.ts';
import { TokenCommandError, type TokenSource } from '../tokens/token-source.ts';

/** The options a check's missing input is given with, for its skip message. */
const MISSING_OPTION = {
  token: '--token or --token-command',
  deniedToken: '--denied-token or --denied-token-command',
  expiredToken: '--expired-token or --expired-token-command (a genuine token past its lifetime)',
  revokedToken: '--revoked-token or --revoked-token-command (a genuine token the identity provider revoked)',
  tier: '--tier (the tier whoami must show for --token)',
};

/** The check of retry safety (spec §4 rule 4): a repeat refused as a duplicate is its failure. */
export const REPEAT_RULE = 'retry.sequential';

/**
 * retry.sequential's verdict when its own repeats held (or could not all be observed), but other checks
 * met repeats refused as duplicates: a failure, naming the first such exchange and the check that met it.
 */
export function blamedRepeat(own: CheckResult, met: { by: string; exchange: Exchange }[]): CheckOutcome {
  const [first] = met as [{ by: string; exchange: Exchange }];
  const others =
    met.length > 1
      ? ` (and ${met.length - 1} more, met by ${[...new Set(met.slice(1).map((m) => m.by))].join(', ')})`
      : '';
  const ownly =
    own.verdict === 'pass'
      ? `its own repeats held (${own.message})`
      : `its own repeats were not all observed (${own.message})`;
  return {
    verdict: 'fail',
    message: `Expected every repeat of a call to answer as the first (spec §4 rule 4: whoami, search and fetch are safe to repeat; §7: a write-like tool's repeat with its idempotency key is too); got ${describeResponse(first.exchange)} to ${describeCall(first.exchange)}, a call the gateway had answered before in this run, met by ${first.by}${others}; ${ownly}. Fix: ${repeatRefusedFix({ method: first.exchange.request.method, path: first.exchange.request.path, writeLike: carriedIdempotencyKey(first.exchange) })}`,
    reproduction: reproductionOf(first.exchange),
  };
}

/** One check run in a context: skipped for a missing input, its verdict with the suite's tokens taken out. */
export async function runOne(
  check: Check,
  ctx: CheckContext,
  tokenSources: (TokenSource | undefined)[],
): Promise<{ result: CheckResult; repeatRefused?: Exchange; realTokenRefused?: boolean }> {
  const base = { id: check.id, title: check.title, specRef: check.specRef, level: check.level };
  const missing = (check.needs ?? []).filter((need) => !ctx.has[need]);
  if (missing.length > 0) {
    return {
      result: {
        ...base,
        verdict: 'skipped',
        message: `needs ${missing.map((m) => MISSING_OPTION[m]).join(' and ')}`,
        enabledBy: missing.map((m) => MISSING_OPTION[m]).join(' and '),
        durationMs: 0,
        requests: 0,
      },
    };
  }
  const started = ctx.now();
  const before = ctx.client.requests;
  let outcome: Awaited<ReturnType<Check['run']>>;
  try {
    outcome = await check.run(ctx);
  } catch (error) {
    if (error instanceof TokenCommandError) throw new CannotRunError(error.message);
    outcome = {
      verdict: 'inconclusive',
      unobserved: 'suite-error',
      message: `the check could not run: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const { repeatRefused, realTokenRefused, ...named } = outcome;
  // A refused repeat met by a check of another rule was described by its path alone: name its tool.
  const tool = repeatRefused && ctx.tools.find((t) => t.path === repeatRefused.request.path);
  const told = tool
    ? { ...named, message: named.message.replaceAll(`--tool NAME:`, `--tool ${tool.name}:`) }
    : named;
  return {
    result: {
      ...base,
      ...(await withoutTokens(told, tokenSources)),
      durationMs: ctx.now() - started,
      requests: ctx.client.requests - before,
    },
    ...(repeatRefused && { repeatRefused }),
    ...(realTokenRefused && { realTokenRefused }),
  };
}

/** Takes the suite's tokens out of what the gateway echoed into a message or counterexample. */
export async function withoutTokens(
  outcome: Awaited<ReturnType<Check['run']>>,
  sources: (TokenSource | undefined)[],
): Promise<Awaited<ReturnType<Check['run']>>> {
  const tokens: string[] = [];
  for (const source of sources) {
    const value = await source?.current().catch(() => undefined);
    if (value) tokens.push(value);
  }
  const redact = (text: string) => redactTokens(text, tokens);
  const { reproduction } = outcome;
  return {
    ...outcome,
    message: redact(outcome.message),
    ...(reproduction && {
      reproduction: {
        ...reproduction,
        ...(reproduction.counterexample !== undefined && {
          counterexample: redact(reproduction.counterexample),
        }),
        ...(reproduction.exchange && { exchange: redactExchange(reproduction.exchange, redact) }),
      },
    }),
  };
}

/** An exchange with the suite's tokens taken out of everything the gateway sent back (and of what was sent). */
function redactExchange(record: ExchangeRecord, redact: (text: string) => string): ExchangeRecord {
  const { request, response } = record;
  return {
    ...record,
    request: {
      ...request,
      headers: request.headers.map(([name, value]) => [name, redact(value)]),
      ...(request.body !== undefined && { body: redact(request.body) }),
    },
    response: {
      ...response,
      headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, redact(v)])),
      body: redact(response.body),
    },
  };
}
