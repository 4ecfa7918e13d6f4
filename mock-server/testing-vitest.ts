/**
 * The client-rules matcher for vitest, registered and typed by one import (in a test file or a
 * `setupFiles` entry): `expect(gateway).toFollowClientRules('agent-early')`.
 *
 * @example
 * import 'agent-tool-gateway-harness/testing/vitest';
 * // ... let the agent work against the gateway ...
 * expect(gateway).toFollowClientRules('agent-early');
 */
import { expect } from 'vitest';
import { type ClientRuleMatchers, clientRuleMatchers } from './testing.ts';

expect.extend(clientRuleMatchers);

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: must match vitest's own declaration, Matchers<T = any>
  interface Matchers<T = any> extends ClientRuleMatchers<T> {}
}

export {
  agentTimeline,
  assertFollowsClientRules,
  assertFollowsClientRulesShared,
  clientRuleMatchers,
  timelineOf,
} from './testing.ts';
