import { GatewayError } from '../errors.ts';
import type { Finding } from '../journal/answer-findings.ts';
import type { ForwardedAnswer, ForwardFailure } from './forward.ts';

/*
 * What the proxy answers, journals and finds when the target did not give an answer it could pass on: a
 * deadline passed (504 `upstream_timeout`), the target switched protocols (502 `upstream_error`), or it
 * could not be reached (502 `upstream_error`). Each is journaled with `fault: proxy:<what>`; the deadlines
 * and the 101 are findings against the target, an unreachable target is not (it may be the network's).
 */

const PHASES = {
  connect_timeout: 'connect',
  first_byte_timeout: 'first byte',
  idle_timeout: 'idle',
} as const;

const DETAILS = {
  connect_timeout: (ms: number) => `no connection to the target within ${ms} ms (connect deadline)`,
  first_byte_timeout: (ms: number) =>
    `no status line from the target ${ms} ms after the request was sent (first byte deadline)`,
  idle_timeout: (ms: number) =>
    `the target took none of the request's body for ${ms} ms before answering (idle deadline)`,
} as const;

/** The error the agent gets for a failure, the journal's `fault` for it, and the finding it is. */
export function failureAnswer(
  failure: Exclude<ForwardFailure, { kind: 'agent_gone' | 'bad_request' | 'body_refused' }>,
): {
  error: GatewayError;
  fault: string;
  findings?: Finding[];
} {
  if (failure.kind === 'unreachable')
    return {
      fault: 'proxy:upstream',
      error: new GatewayError('upstream_error', {
        message: `The target gateway could not be reached or broke off its answer (${failure.code}); this answer is the proxy's.`,
        details: { proxy: true, target_error: failure.code },
      }),
    };
  if (failure.kind === 'upgrade')
    return {
      fault: 'proxy:upgrade_refused',
      error: new GatewayError('upstream_error', {
        message:
          "The target answered 101 Switching Protocols, which the proxy does not pass on (it forwards HTTP exchanges only, and never the agent's Upgrade header); this answer is the proxy's.",
        details: { proxy: true, target_status: failure.status },
      }),
      findings: [
        {
          rule: 'target.no-upgrade',
          detail: 'the target answered 101 Switching Protocols to a request that asked for no upgrade',
        },
      ],
    };
  const detail = DETAILS[failure.kind](failure.ms);
  return {
    fault: `proxy:${failure.kind}`,
    error: new GatewayError('upstream_timeout', {
      message: `The target gateway did not answer in time: ${detail}; this answer is the proxy's. Retry with backoff.`,
      details: { proxy: true, deadline: PHASES[failure.kind], deadline_ms: failure.ms },
    }),
    findings: [{ rule: 'target.answers-in-time', detail }],
  };
}

/** The finding of an answer the idle deadline cut off, once begun. */
export function cutOffFinding(cutOff: NonNullable<ForwardedAnswer['cutOff']>): Finding {
  return {
    rule: 'target.answers-in-time',
    detail: `the target sent status ${cutOff.targetStatus} and ${cutOff.bytes} bytes of body, then nothing for ${cutOff.ms} ms (idle deadline): the proxy cut the answer off`,
  };
}
