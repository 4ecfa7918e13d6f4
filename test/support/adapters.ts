import { setupServer } from 'msw/node';
import supertest from 'supertest';
import { gatewayHandlers } from '../../mock-server/adapters/msw.ts';
import { type RunningServer, serve } from '../../mock-server/adapters/node-server.ts';
import type { Gateway } from '../../mock-server/gateway.ts';

export interface CallSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Text, or bytes as sent (a compressed body). */
  body?: string | Uint8Array;
}

export interface CallResult {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** One way of reaching a gateway: every adapter must give the same answers. */
export interface Adapter {
  name: string;
  call(spec: CallSpec): Promise<CallResult>;
  close(): Promise<void>;
}

const fromResponse = async (response: Response): Promise<CallResult> => ({
  status: response.status,
  headers: Object.fromEntries(response.headers),
  text: await response.text(),
});

const toRequestInit = (spec: CallSpec): RequestInit => ({
  method: spec.method,
  headers: spec.headers,
  body: spec.body,
});

/** The handler called directly. */
export function directAdapter(gateway: Gateway): Adapter {
  return {
    name: 'handler',
    call: async (spec) =>
      fromResponse(await gateway.fetch(new Request(`http://gw.test${spec.path}`, toRequestInit(spec)))),
    close: async () => {},
  };
}

/** The Node HTTP server on an ephemeral loopback port, called with supertest. */
export async function nodeAdapter(gateway: Gateway): Promise<Adapter & { server: RunningServer }> {
  const server = await serve(gateway, { port: 0 });
  const agent = supertest(server.url);
  return {
    name: 'node server (supertest)',
    server,
    async call(spec) {
      const method = spec.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete' | 'patch' | 'head';
      let request = agent[method](spec.path)
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => done(null, text));
        });
      for (const [name, value] of Object.entries(spec.headers ?? {})) request = request.set(name, value);
      // Bytes go out as they are (superagent would serialise a Buffer labelled JSON as JSON).
      if (spec.body instanceof Uint8Array) request = request.serialize((bytes) => bytes);
      const body = spec.body instanceof Uint8Array ? Buffer.from(spec.body) : spec.body;
      const response = body === undefined ? await request : await request.send(body);
      return {
        status: response.status,
        headers: response.headers as Record<string, string>,
        text: typeof response.body === 'string' ? response.body : '',
      };
    },
    close: () => server.close(),
  };
}

/** msw intercepting the global fetch, the way an agent developer uses the gateway in-process. */
export function mswAdapter(gateway: Gateway, baseUrl = 'http://gateway.msw.test'): Adapter {
  const server = setupServer(...gatewayHandlers(gateway, { baseUrl }));
  server.listen({ onUnhandledFrame: 'error' });
  return {
    name: 'msw (global fetch)',
    call: async (spec) => fromResponse(await fetch(`${baseUrl}${spec.path}`, toRequestInit(spec))),
    close: async () => server.close(),
  };
}
