import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchRequestArb,
  outcomeViolations,
  rawRequestArb,
  sendFetch,
  sendRaw,
  showRequest,
} from '../dev/http-fuzz.ts';
import { type RunningServer, serve } from '../mock-server/adapters/node-server.ts';
import { createGateway } from '../mock-server/gateway.ts';
import { fc, test } from './support/property.ts';

/**
 * The reference gateway under fuzzing, over raw sockets and fetch: bounded, about 3,000 generated requests
 * (80 batches of raw ones, 50 of fetch ones); `npm run fuzz -- --requests 100000` is the big run. Every answer
 * is a complete HTTP response, never a 5xx (no fault is armed), and every error is JSON with a code of the
 * catalogue and its status. Timeouts are short so that the requests that stall are answered quickly; the
 * deadlines are generous, and nothing is timed.
 */
const gateway = createGateway({
  config: { server: { headers_timeout_ms: 1000, request_timeout_ms: 1500, idle_timeout_ms: 1000 } },
});
const tokens = ['agent-verified', 'agent-early', 'agent-none'].map((id) => gateway.mintToken(id));
let server: RunningServer;
beforeAll(async () => {
  server = await serve(gateway, { port: 0 });
});
afterAll(async () => {
  await server.close();
});
const DEADLINE_MS = 20_000;

describe('HTTP fuzzing of the reference gateway', () => {
  test.prop([fc.array(rawRequestArb(tokens), { minLength: 1, maxLength: 60, size: 'max' })], { numRuns: 80 })(
    'raw sockets: every request gets a complete answer; errors are catalogue JSON; never a 5xx',
    async (batch) => {
      const outcomes = await Promise.all(batch.map((request) => sendRaw(server.port, request, DEADLINE_MS)));
      const problems = outcomes.flatMap((outcome, i) => {
        const request = batch[i] as (typeof batch)[number];
        return outcomeViolations(outcome, request.method, request.bytes).map(
          (problem) => `${problem} <- ${showRequest(request.bytes)}`,
        );
      });
      expect(problems).toEqual([]);
    },
    120_000,
  );

  test.prop([fc.array(fetchRequestArb(tokens), { minLength: 1, maxLength: 40, size: 'max' })], {
    numRuns: 50,
  })(
    'fetch: every request gets an answer; errors are catalogue JSON; never a 5xx',
    async (batch) => {
      const outcomes = await Promise.all(batch.map((request) => sendFetch(server.url, request, DEADLINE_MS)));
      const problems = outcomes.flatMap((outcome, i) => {
        const request = batch[i] as (typeof batch)[number];
        return outcomeViolations(outcome, request.method).map(
          (problem) => `${problem} <- ${request.method} ${request.path} ${JSON.stringify(request.headers)}`,
        );
      });
      expect(problems).toEqual([]);
    },
    120_000,
  );

  it('the gateway is still up and answering afterwards', async () => {
    const response = await fetch(`${server.url}/v1/health`);
    expect(response.status).toBe(200);
  });
});
