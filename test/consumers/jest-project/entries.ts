// Every entry a jest user can import (no vitest installed here), so the strict type check (skipLibCheck
// false) reads every declaration file those entries reach.
import type * as main from 'agent-tool-gateway-harness';
import type * as conformance from 'agent-tool-gateway-harness/conformance';
import type * as msw from 'agent-tool-gateway-harness/msw';
import type * as testing from 'agent-tool-gateway-harness/testing';
import type * as testingJest from 'agent-tool-gateway-harness/testing/jest';

export type Entries = [typeof main, typeof conformance, typeof msw, typeof testing, typeof testingJest];
