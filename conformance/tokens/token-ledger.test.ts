import { describe, expect, it } from 'vitest';
import type { Exchange } from '../model/suite-request.ts';
import { createTokenLedger } from './token-ledger.ts';

const answer = (status: number, code?: string): Exchange =>
  ({
    request: { method: 'GET', path: '/v1/whoami' },
    url: 'http://127.0.0.1:1/v1/whoami',
    credential: 'valid',
    key: 'GET /v1/whoami (valid token)',
    sentHeaders: [],
    response: { status, headers: {}, text: '', json: code ? { code } : {} },
    attempts: 1,
    rateLimitExhausted: false,
    transientRetries: 0,
  }) as Exchange;
const ok = answer(200);
const refused = answer(401, 'invalid_identity_token');

/** Records answers one after another (each sent after the previous one arrived), all for `value`. */
function sequential(
  ledger: ReturnType<typeof createTokenLedger>,
  value: string,
  answers: Exchange[],
  from = 0,
) {
  answers.forEach((exchange, i) => {
    ledger.record(value, 'valid', { exchange, sentAfter: from + i, answerNo: from + i + 1 });
  });
}

describe('the token ledger', () => {
  it('a token refused and then accepted again, by a request sent after the refusal, is the gateway contradicting itself', () => {
    const ledger = createTokenLedger();
    sequential(ledger, 'tok', [ok, ok, refused, ok]);
    const found = ledger.contradiction();
    expect(found?.refused.answerNo).toBe(3);
    expect(found?.acceptedAfter.answerNo).toBe(4);
    expect(found?.acceptedBefore?.answerNo).toBe(1);
    expect([found?.refusals, found?.acceptances]).toEqual([1, 3]);
  });

  it('refused at first and accepted after (the pre-check met the refusing instance first) counts too', () => {
    const ledger = createTokenLedger();
    sequential(ledger, 'tok', [refused, ok]);
    expect(ledger.contradiction()?.acceptedBefore).toBeUndefined();
    expect(ledger.contradiction()?.acceptedAfter.answerNo).toBe(2);
  });

  it('accepted and then refused for good is an expiry, not evidence; so is a fresh token accepted after an old one was refused', () => {
    const ledger = createTokenLedger();
    sequential(ledger, 'old', [ok, ok, refused, refused]);
    sequential(ledger, 'fresh', [ok, ok], 4);
    expect(ledger.contradiction()).toBeUndefined();
    expect(ledger.totals()).toEqual({ acceptances: 4, refusals: 2 });
  });

  it('answers to concurrent requests are not ordered by arrival: an acceptance sent before the refusal arrived proves nothing', () => {
    const ledger = createTokenLedger();
    // Two requests sent together (both after 0 answers); the refusal arrives first, the acceptance second.
    ledger.record('tok', 'valid', { exchange: refused, sentAfter: 0, answerNo: 1 });
    ledger.record('tok', 'valid', { exchange: ok, sentAfter: 0, answerNo: 2 });
    expect(ledger.contradiction()).toBeUndefined();
    ledger.record('tok', 'valid', { exchange: ok, sentAfter: 2, answerNo: 3 });
    expect(ledger.contradiction()?.acceptedAfter.answerNo).toBe(3);
  });

  it('a 403 access_denied accepts the token (§5 rule 4); a 429 or a 5xx says nothing of it; 200 rate_limited is no acceptance', () => {
    const ledger = createTokenLedger();
    sequential(ledger, 'tok', [
      refused,
      answer(429, 'rate_limited'),
      answer(503),
      answer(200, 'rate_limited'),
    ]);
    expect(ledger.contradiction()).toBeUndefined();
    sequential(ledger, 'tok', [answer(403, 'access_denied')], 4);
    expect(ledger.contradiction()?.acceptedAfter.exchange.response.status).toBe(403);
  });

  it('numbers token values without keeping them in exchanges', () => {
    const ledger = createTokenLedger();
    expect([ledger.idOf('a'), ledger.idOf('b'), ledger.idOf('a')]).toEqual([1, 2, 1]);
  });
});
