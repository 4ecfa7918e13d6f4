// Every entry of the package, so the strict type check (skipLibCheck false) reads every declaration file a
// user of any entry can reach, with the test tools this project has (msw, vitest).
import type * as main from 'agent-tool-gateway-harness';
import type * as conformance from 'agent-tool-gateway-harness/conformance';
import type * as conformanceVitest from 'agent-tool-gateway-harness/conformance/vitest';
import type * as msw from 'agent-tool-gateway-harness/msw';
import type * as testing from 'agent-tool-gateway-harness/testing';
import type * as testingVitest from 'agent-tool-gateway-harness/testing/vitest';

export type Entries = [
  typeof main,
  typeof conformance,
  typeof conformanceVitest,
  typeof msw,
  typeof testing,
  typeof testingVitest,
];
