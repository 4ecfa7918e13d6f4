/**
 * The reference Agent Tool Gateway and its simulated identity provider.
 *
 * @example
 * import { createGateway, serve } from 'agent-tool-gateway-harness';
 * const server = await serve(createGateway(), { port: 8787 });
 */
export { type FetchHandler, type RunningServer, serve } from './adapters/node-server.ts';
export { type Clock, createClock, type VirtualClock } from './clock.ts';
export { ConfigError, DEFAULT_CONFIG_FILE, loadConfig, type ResolvedConfig } from './config/load-config.ts';
export {
  type GatewayConfig,
  type GatewayConfigInput,
  type GatewayConfigOverlay,
  TOOL_NAMES,
  type ToolName,
} from './config/schema.ts';
export { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode, GatewayError } from './errors.ts';
export { createGateway, type Gateway, type GatewayOptions } from './gateway.ts';
export type { Identity, InvalidTokenReason, VerifyResult } from './identity/identity-provider.ts';
export { createLocalVerifier, createRemoteVerifier, type IdentityVerifier } from './identity/verifier.ts';
export { ANSWER_RULES, findingsOf, judgeAnswer } from './journal/answer-findings.ts';
export { type Har, harOf } from './journal/har.ts';
export { IDENTITY_HEADER } from './pipeline/identify.ts';
export type { FetchProvider, FetchRequest, FetchResponse } from './providers/fetch-provider.ts';
export type { SearchProvider, SearchRequest, SearchResponse } from './providers/search-provider.ts';
export { createProxy, type Proxy, type ProxyOptions } from './proxy/proxy.ts';
export {
  type AnyToolDefinition,
  BUILT_IN_TOOLS,
  type ToolDefinition,
  toolDefinitions,
} from './tools/index.ts';
