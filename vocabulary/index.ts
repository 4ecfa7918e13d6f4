/**
 * The spec's vocabulary (agent-tool-gateway.md), declared once and imported by both the reference gateway
 * (mock-server/) and the conformance suite (conformance/), which never import each other: the tools, the
 * endpoints, the error codes with their statuses, the identity header, references to the spec's sections,
 * Retry-After parsing, and the redaction of tokens and unprintable text in what either side reports. Plain TypeScript; it imports nothing outside this folder.
 */
export * from './endpoints.ts';
export * from './error-codes.ts';
export * from './identity-header.ts';
export * from './redact.ts';
export * from './retry-after.ts';
export * from './spec-ref.ts';
export * from './tools.ts';
