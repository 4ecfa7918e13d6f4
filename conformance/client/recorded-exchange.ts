import type { ExchangeRecord, Reproduction } from '../model/check-result.ts';
import type { Exchange } from '../model/suite-request.ts';
import { curlFor } from './curl.ts';

/** Longest response body a report keeps: enough to read an error, not a 5 MB page. */
export const MAX_RECORDED_BODY = 4000;

/**
 * An exchange as reports show it: the request as sent (token header redacted by the client), the answer
 * as received, a long body cut at MAX_RECORDED_BODY characters.
 */
export function exchangeRecord(exchange: Exchange): ExchangeRecord {
  const { request, response } = exchange;
  const cut = response.text.length > MAX_RECORDED_BODY;
  return {
    request: {
      method: request.method,
      url: exchange.url,
      headers: exchange.sentHeaders.map(([name, value]) => [name, value]),
      ...(request.body !== undefined && { body: request.body }),
    },
    response: {
      status: response.status,
      headers: { ...response.headers },
      body: cut ? response.text.slice(0, MAX_RECORDED_BODY) : response.text,
      ...(cut && { length: response.text.length }),
      ...(response.error !== undefined && { error: response.error }),
    },
    attempts: exchange.attempts,
  };
}

/**
 * How to see a failure on this exchange again: its curl command and the exchange itself.
 *
 * @example
 * return { verdict: 'fail', message, reproduction: reproductionOf(exchange) };
 */
export function reproductionOf(exchange: Exchange): Reproduction {
  return { curl: curlFor(exchange), exchange: exchangeRecord(exchange) };
}
