import { describe, expect, it } from 'vitest';
import type { GatewayRequest } from '../http/context.ts';
import { headerList } from './header-list.ts';

const request = (more: Partial<GatewayRequest>) =>
  ({
    method: 'GET',
    path: '/',
    query: '',
    origin: 'http://gw.test',
    header: () => undefined,
    ...more,
  }) as GatewayRequest;

describe('headerList', () => {
  it("takes the adapter's own flat list when it has one", () => {
    const list = ['host', 'gw.test', 'x-note', 'a, b'];
    expect(headerList(request({ headerList: () => list, headers: () => [['other', 'x']] }))).toBe(list);
  });

  it('flattens the pairs of an adapter without one, and gives none when it lists no headers', () => {
    const pairs: [string, string][] = [
      ['host', 'gw.test'],
      ['x-note', 'a'],
    ];
    expect(headerList(request({ headers: () => pairs }))).toEqual(['host', 'gw.test', 'x-note', 'a']);
    expect(headerList(request({}))).toEqual([]);
  });
});
