import { isToolName } from '../../vocabulary/tools.ts';
import { journalFingerprint } from '../hash.ts';
import type { Answer, CallContext, Handler } from '../http/context.ts';
import { NO_STORE, respondJson, respondJsonText } from '../http/respond.ts';
import type { Identity } from '../identity/identity-provider.ts';
import { andThen, type MaybePromise } from '../maybe-promise.ts';
import { type Admission, admit } from '../pipeline/admit.ts';
import { authorize } from '../pipeline/authorize.ts';
import { compose, type Stage } from '../pipeline/compose.ts';
import { idempotencyKey, type KeyOutcome } from '../pipeline/idempotency-key.ts';
import { identify } from '../pipeline/identify.ts';
import { injectFault } from '../pipeline/inject-fault.ts';
import { readToolBody, type ToolBody } from '../pipeline/read-tool-body.ts';
import { replayAnswer } from '../pipeline/replay-answer.ts';
import { runTool, type SerialisedAnswer } from '../pipeline/run-tool.ts';
import { type ToolSpec, toolSpecOf } from '../pipeline/tool-spec.ts';
import type { Runtime } from '../runtime.ts';
import type { AnyToolDefinition } from '../tools/index.ts';
import type { Routes } from './route-declaration.ts';

/**
 * A call with a token on its way through a route's stages: the one object of the request that every stage
 * reads and fills (made with every field, so it keeps one shape), instead of each stage handing the next a
 * record, a closure or a promise of its own. The in-memory path allocates nothing else for it.
 */
interface Caller {
  readonly runtime: Runtime;
  readonly ctx: CallContext;
  identity: Identity | undefined;
  admission: Admission | undefined;
  key: KeyOutcome | undefined;
  /** The tool's 200 body, once it answered: what the idempotency key stores. */
  answered: string | undefined;
}

/** A tool call: a caller, the tool, and its body once read. */
interface Call extends Caller {
  readonly spec: ToolSpec;
  body: ToolBody<unknown> | undefined;
}

// What a stage reads that an earlier stage wrote (the order of the stages guarantees it).
const identityOf = (call: Caller) => call.identity as Identity;
const admissionOf = (call: Caller) => call.admission as Admission;

/** A stage's result written into the call: at once when the stage had it (no closure, no promise), else once it has. */
function fill<C, K extends keyof C>(
  call: C,
  field: K,
  value: MaybePromise<C[K]>,
): undefined | Promise<undefined> {
  if (value instanceof Promise)
    return value.then((settled: C[K]) => {
      call[field] = settled;
      return undefined;
    });
  call[field] = value;
  return undefined;
}

/** identify (401): the caller's token. */
const identifyCaller: Stage<Caller, Answer> = (call) =>
  fill(call, 'identity', identify(call.runtime, call.ctx));

/**
 * replay: with a replay scenario, the recorded answer left for this agent answers once the body is read (so
 * the journal has what was asked: the report recognises retries by it), in place of policy, limits and
 * tool. Only the spec's endpoints have recorded answers (a recording names them by path).
 */
const replayRecorded: Stage<Call, Answer> = (call) => {
  const { tool } = call.spec;
  const replayed = isToolName(tool) ? call.runtime.replay?.take(identityOf(call).agentId, tool) : undefined;
  if (!replayed) return undefined;
  return andThen(readToolBody(call.ctx, identityOf(call), call.spec), () => replayAnswer(call.ctx, replayed));
};

/** authorize (403): tiers, allowlist, a disabled tool. */
const authorizeTool: Stage<Call, Answer> = (call) =>
  authorize(call.runtime, call.ctx, identityOf(call), call.spec);

/** read body (415, 413, 400): Content-Type, size, JSON, the tool's schema; the journal learns what it asks. */
const readBody: Stage<Call, Answer> = (call) =>
  fill(call, 'body', readToolBody(call.ctx, identityOf(call), call.spec));

/** admit (429): concurrency, then the rate-limit rules that count this tool. */
const admitCall: Stage<Call, Answer> = (call) =>
  fill(call, 'admission', admit(call.runtime, call.ctx, identityOf(call), call.spec.tool));

/** The idempotency key's decision kept for the settling; a stored answer replays. */
const keyed = (call: Caller, key: KeyOutcome) => {
  call.key = key;
  return key.replay;
};

/** idempotency key: replays a stored answer (or 409/422); without the header, nothing. */
const checkIdempotencyKey: Stage<Call, Answer> = (call) => {
  const key = idempotencyKey(
    call.runtime,
    call.ctx,
    identityOf(call),
    call.spec,
    (call.body as ToolBody<unknown>).bytes,
    admissionOf(call).headers,
  );
  return key instanceof Promise ? key.then((settled) => keyed(call, settled)) : keyed(call, key);
};

/** inject fault: an armed fault's 5xx, wait or dropped connection. */
const injectToolFault: Stage<Call, Answer> = (call) =>
  injectFault(call.runtime, call.ctx, call.spec.tool, identityOf(call).agentId);

/** The tool's 200 with the admission's RateLimit headers; its body kept for the idempotency key. */
const toolAnswer = (call: Call, result: SerialisedAnswer) => {
  call.answered = result.text;
  return respondJsonText(call.ctx, result.text, 200, NO_STORE, admissionOf(call).headers, result.bytes);
};

/** run tool, respond: the provider's answer, 200, with the admission's RateLimit headers. */
const answerWithTool: Stage<Call, Answer> = (call) => {
  const result = runTool(call.runtime, call.spec, (call.body as ToolBody<unknown>).value);
  return result instanceof Promise
    ? result.then((settled) => toolAnswer(call, settled))
    : toolAnswer(call, result);
};

/** However the call ends: the key settled with the answer (stored only when it succeeded), the slot given back. */
const settleCall = (call: Caller) => {
  call.key?.settle?.(call.answered);
  call.admission?.release();
};

/**
 * A tool call (spec section 4), as the list of its stages. With a replay scenario, a recorded answer left for
 * the agent answers once the body is read. The record stage follows once the adapter has written the
 * answer. In memory every stage answers at once and so does the handler (no promise).
 */
export const TOOL_STAGES: readonly Stage<Call, Answer>[] = [
  identifyCaller,
  replayRecorded,
  authorizeTool,
  readBody,
  admitCall,
  checkIdempotencyKey,
  injectToolFault,
  answerWithTool,
];

const toolStages = compose(TOOL_STAGES, settleCall);

/** The handler of one tool's route. */
function toolCall(runtime: Runtime, spec: ToolSpec): Handler {
  const fingerprint = journalFingerprint(spec.tool);
  return (ctx) => {
    ctx.note.operation = spec.tool;
    ctx.note.request_fingerprint = fingerprint;
    return toolStages({
      runtime,
      ctx,
      spec,
      identity: undefined,
      admission: undefined,
      key: undefined,
      answered: undefined,
      body: undefined,
    });
  };
}

/** The whoami answer: the caller, its tier, the tools it may call now, its token's lifetime. */
function whoamiAnswer(call: Caller): Answer {
  const { runtime } = call;
  const identity = identityOf(call);
  const body = {
    agent: { id: identity.agentId, name: identity.name },
    tier: identity.tier,
    tools: runtime.policy.allowedTools(identity),
    token: {
      issued_at: new Date(identity.issuedAt).toISOString(),
      expires_at: new Date(identity.expiresAt).toISOString(),
      expires_in_seconds: Math.max(0, Math.floor((identity.expiresAt - runtime.clock.now()) / 1000)),
    },
  };
  return respondJson(call.ctx, body, 200, NO_STORE, admissionOf(call).headers);
}

/** replay for whoami: a recorded answer left for this agent answers in place of limits and identity. */
const replayWhoami: Stage<Caller, Answer> = (call) => {
  const replayed = call.runtime.replay?.take(identityOf(call).agentId, 'whoami');
  return replayed ? replayAnswer(call.ctx, replayed) : undefined;
};

/** admit (429) for whoami: limits apply to it, policy does not. */
const admitWhoami: Stage<Caller, Answer> = (call) =>
  fill(call, 'admission', admit(call.runtime, call.ctx, identityOf(call), 'whoami'));

/** inject fault on whoami. */
const injectWhoamiFault: Stage<Caller, Answer> = (call) =>
  injectFault(call.runtime, call.ctx, 'whoami', identityOf(call).agentId);

/** GET /v1/whoami (spec section 4 rule 2), as the list of its stages: every valid token, whatever its tier. */
export const WHOAMI_STAGES: readonly Stage<Caller, Answer>[] = [
  identifyCaller,
  replayWhoami,
  admitWhoami,
  injectWhoamiFault,
  whoamiAnswer,
];

const whoamiStages = compose(WHOAMI_STAGES, settleCall);

/** The /v1 endpoints that are not tools: health and whoami. */
function plainEndpoints(runtime: Runtime) {
  const whoamiFingerprint = journalFingerprint('whoami');
  /** GET /v1/health (spec section 4 rule 1): answered before identity, so no token, and no bad token, changes it. */
  const health: Handler = (ctx) => {
    ctx.note.operation = 'health';
    return andThen(injectFault(runtime, ctx, 'health', undefined), (fault) => {
      if (fault) return fault;
      const body = { status: 'ok', version: 'v1', time: new Date(runtime.clock.now()).toISOString() };
      return respondJson(ctx, body, 200, NO_STORE);
    });
  };
  const whoami: Handler = (ctx) => {
    ctx.note.operation = 'whoami';
    ctx.note.request_fingerprint = whoamiFingerprint;
    return whoamiStages({
      runtime,
      ctx,
      identity: undefined,
      admission: undefined,
      key: undefined,
      answered: undefined,
    });
  };
  return { health, whoami };
}

/** The tools as the pipeline runs them, each made once from its definition and bound to the runtime's providers. */
export function toolSpecs(runtime: Runtime, tools: readonly AnyToolDefinition[]): ToolSpec[] {
  const providers = {
    search: runtime.search,
    fetchPage: runtime.fetchPage,
    corpus: runtime.corpus,
    seed: runtime.config.corpus.seed,
  };
  return tools.map((tool) => toolSpecOf(tool, providers));
}

/** The /v1 endpoints: health, whoami and every tool's route (`public-route-table.ts`, `tool-routes.ts`). */
export function registerGatewayRoutes(routes: Routes, runtime: Runtime) {
  const { health, whoami } = plainEndpoints(runtime);
  routes.bind('health', health);
  routes.bind('whoami', whoami);
  const specs = toolSpecs(runtime, runtime.tools);
  runtime.tools.forEach((tool, i) => {
    routes.bind(tool.routeId, toolCall(runtime, specs[i] as ToolSpec));
  });
}
