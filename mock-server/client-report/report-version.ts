/**
 * The version of the client report's JSON (`schema_version`), a contract for harnesses in any language:
 * raised when a field is removed or changes meaning (fields may be added within a version). Its JSON Schema
 * is mock-server/client-report/report.schema.json, generated from `clientReportSchema`
 * (`npm run gen:report-schema`).
 */
export const CLIENT_REPORT_SCHEMA_VERSION = 1;

/** The JSON Schema's `$id`: names the version, so a harness can tell which contract it holds. */
export const CLIENT_REPORT_SCHEMA_ID = `urn:agent-tool-gateway-harness:client-report:v${CLIENT_REPORT_SCHEMA_VERSION}`;
