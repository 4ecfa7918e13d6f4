import { IDENTITY_HEADER } from '../../vocabulary/identity-header.ts';
import type { Exchange } from '../model/suite-request.ts';
import { shellExpression, shellQuote } from '../model/token-value.ts';

// Headers and body go out as UTF-8 bytes; shellQuote writes one byte per latin1 character.
const bytes = (text: string) => shellQuote(Buffer.from(text, 'utf8').toString('latin1'));

/**
 * A curl command that sends the same request again. Real tokens never appear: they are read from shell
 * variables ($TOKEN, $DENIED_TOKEN), with the same alteration the check applied.
 */
export function curlFor(exchange: Exchange): string {
  const { request } = exchange;
  const parts = ['curl -sS -i', `-X ${request.method}`, shellQuote(exchange.url)];
  for (const [name, value] of exchange.sentHeaders) {
    const isToken = exchange.tokenTransform && name === (request.tokenHeader ?? IDENTITY_HEADER);
    if (isToken && exchange.tokenTransform) {
      const { variable, transform } = exchange.tokenTransform;
      parts.push(`-H ${bytes(`${name}: `)}${shellExpression(variable, transform)}`);
    } else {
      parts.push(`-H ${bytes(`${name}: ${value}`)}`);
    }
  }
  if (request.body !== undefined) parts.push(`--data-raw ${bytes(request.body)}`);
  return parts.join(' ');
}
