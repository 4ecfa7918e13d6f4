import { UNDECIDED_ACCEPT } from '../../mock-server/client-report/rule-readings/undecided-accepts.ts';

/**
 * Whether a rule's NOT OBSERVED reason is one the machine's load may give on any path, whoever runs the
 * gateway: the event loop stalling (rule-readings/stall-decided.ts), or a connection accepted at the
 * gateway's first poll after a lone answer, which the scheduling of two processes decides
 * (rule-readings/undecided-accepts.ts). Any other reason is the path's own doing (a key the proxy does not
 * know, a request no agent was named for).
 */
export const unobservedByLoad = (reason: string | undefined) =>
  reason !== undefined && (/event loop stalling/.test(reason) || reason.includes(UNDECIDED_ACCEPT));
