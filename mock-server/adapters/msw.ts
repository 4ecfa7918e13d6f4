import { type HttpHandler, http } from 'msw';
import { createGateway, type GatewayOptions } from '../gateway.ts';
import { isGateway } from '../is-gateway.ts';
import { noteRequest, trackGateway } from '../testing-marks.ts';
import type { FetchHandler } from './node-server.ts';

/**
 * msw handlers that answer every request under `baseUrl` with the reference gateway, in process.
 * Pass a gateway you created (to mint tokens, move its clock, read its journal), any other fetch handler,
 * or gateway options. The gateway's fetch adapter journals, for each request, which answers it had handed
 * back when the handler was called: the client report's facts for telling a reaction from a request already
 * on its way (msw calls the handlers of requests sent together before it hands back any answer). A gateway
 * passed here is known to the test helpers: each test's requests are told from the tests' before it (the
 * matchers grade only the current test's).
 *
 * @example
 * const gateway = createGateway();
 * const server = setupServer(...gatewayHandlers(gateway, { baseUrl: 'http://gateway.test' }));
 * server.listen();
 * await fetch('http://gateway.test/v1/whoami', { headers: { 'X-Agent-Identity': gateway.mintToken('agent-early') } });
 */
export function gatewayHandlers(
  gateway: FetchHandler | GatewayOptions = {},
  options: { baseUrl?: string } = {},
): HttpHandler[] {
  const target = 'fetch' in gateway ? gateway : createGateway(gateway);
  const graded = isGateway(target) ? target : undefined;
  if (graded) trackGateway(graded);
  const baseUrl = (options.baseUrl ?? 'http://gateway.test').replace(/\/+$/, '');
  return [
    http.all(`${baseUrl}/*`, ({ request }) => {
      if (graded) noteRequest(graded);
      return target.fetch(request);
    }),
  ];
}
