import type { Exchange } from './http-client.ts';
import { shellExpression, shellQuote } from './token-value.ts';

/**
 * A curl command that sends the same request again. Real tokens never appear: they are read from shell
 * variables ($TOKEN, $DENIED_TOKEN), with the same alteration the check applied.
 */
export function curlFor(exchange: Exchange): string {
  const { request } = exchange;
  const parts = ['curl -sS -i', `-X ${request.method}`, shellQuote(exchange.url)];
  for (const [name, value] of exchange.sentHeaders) {
    const isToken = exchange.tokenTransform && name === (request.tokenHeader ?? 'X-Agent-Identity');
    if (isToken && exchange.tokenTransform) {
      const { variable, transform } = exchange.tokenTransform;
      parts.push(`-H ${shellQuote(`${name}: `)}${shellExpression(variable, transform)}`);
    } else {
      parts.push(`-H ${shellQuote(`${name}: ${value}`)}`);
    }
  }
  if (request.body !== undefined)
    parts.push(`--data-raw ${shellQuote(Buffer.from(request.body, 'utf8').toString('latin1'))}`);
  return parts.join(' ');
}
