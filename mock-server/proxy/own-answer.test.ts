import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { answerOwn, writeOwn } from './own-answer.ts';
import { collector } from './wire.ts';

/** A loopback server whose every request is handled by `handle`; closed after `run`. */
async function withServer(
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  run: (url: string) => Promise<void>,
) {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const answer = (status: number, body: string, extra: object = {}) => ({
  status,
  headers: { 'content-type': 'application/json' },
  body,
  ...extra,
});

describe("the proxy's own answers", () => {
  it('writes an answer whole with its length, and resolves with when it was handed over', async () => {
    const written: number[] = [];
    await withServer(
      (_req, res) => {
        writeOwn(res, answer(503, '{"code":"upstream_unavailable"}')).then((at) => written.push(at));
      },
      async (url) => {
        const response = await fetch(url);
        expect(response.status).toBe(503);
        expect(response.headers.get('content-length')).toBe('31');
        expect(await response.text()).toBe('{"code":"upstream_unavailable"}');
      },
    );
    expect(written).toHaveLength(1);
  });

  it('drops the connection for a drop answer', async () => {
    await withServer(
      (_req, res) => {
        writeOwn(res, answer(0, '', { drop: true }));
      },
      async (url) => {
        await expect(fetch(url)).rejects.toThrow();
      },
    );
  });

  it("reads the request's body, answers, and records once the body is in, with the answer's status and text", async () => {
    const records: { status: number; text?: string; body: string }[] = [];
    let recorded: () => void = () => {};
    const wasRecorded = new Promise<void>((resolve) => {
      recorded = resolve;
    });
    await withServer(
      (req, res) => {
        const requestBody = collector(1024);
        const record = ((status: number, _at: number, seen: { text?: string }) => {
          records.push({ status, text: seen.text, body: requestBody.bytes().toString('utf8') });
          recorded();
        }) as unknown as Parameters<typeof answerOwn>[0]['record'];
        answerOwn({ req, res, requestBody, record }, answer(400, '{"code":"invalid_request"}'));
      },
      async (url) => {
        const response = await fetch(url, { method: 'POST', body: '{"query":"kept for its meaning"}' });
        expect(response.status).toBe(400);
        await response.text();
        await wasRecorded;
      },
    );
    expect(records).toEqual([
      { status: 400, text: '{"code":"invalid_request"}', body: '{"query":"kept for its meaning"}' },
    ]);
  });
});
