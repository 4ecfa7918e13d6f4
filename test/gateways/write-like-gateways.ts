import { fronted, jsonError, type ProofTarget, type StartOptions, tokensOf } from './proof-target.ts';

/*
 * A gateway with a write-like extra tool, web.snapshot (POST /v1/web/snapshot { url }): it takes a snapshot
 * of a page, so a repeat of the same URL without the first call's Idempotency-Key is refused 409 (spec §7:
 * "for write-like operations an idempotency key should be included"). The outsiders' gateway refused such a
 * repeat within 60 s; here for as long as the gateway runs, so no verdict depends on how fast the run is.
 * Declared write-like (`--tool web.snapshot:write-like=/v1/web/snapshot=...`) it conforms; a twin that also
 * refuses a repeat carrying the first call's key breaks retry safety for a write-like tool.
 */

export const SNAPSHOT_PATH = '/v1/web/snapshot';
export const SNAPSHOT_BODY = '{"url":"https://example.com/snapshot"}';
/** The declaration of web.snapshot as the suite is told of it: write-like, with its body. */
export const SNAPSHOT_WRITE_LIKE = `web.snapshot:write-like=${SNAPSHOT_PATH}=${SNAPSHOT_BODY}`;
/** The same tool declared without the write-like mark (as the runs had it). */
export const SNAPSHOT_PLAIN = `web.snapshot=${SNAPSHOT_PATH}=${SNAPSHOT_BODY}`;

/**
 * The reference gateway with web.snapshot (an extra tool of its config, for the verified tier) behind a front
 * that refuses a repeat of a URL without the key its first served call carried; with `refuseKeyed`, with it too.
 * With `holdMs`, a call is held that long before it is served, and a copy with the same key arriving
 * meanwhile gets 409 idempotency_key_in_use (the IETF draft's answer for a key still in progress).
 */
export function snapshotGateway(
  options: { refuseKeyed?: boolean; declaration?: string; holdMs?: number } = {},
) {
  return (on?: StartOptions) => {
    // The first served call's key per URL ('' when it carried none).
    const firstKey = new Map<string, string>();
    const inProgress = new Set<string>();
    return fronted(
      async (request, gateway, clock) => {
        if (new URL(request.url).pathname !== SNAPSHOT_PATH) return gateway.fetch(request);
        const key = request.headers.get('idempotency-key') ?? '';
        if (options.holdMs && key) {
          if (inProgress.has(key)) return jsonError(409, 'idempotency_key_in_use');
          inProgress.add(key);
          await clock.sleep(options.holdMs);
          inProgress.delete(key);
        }
        const url = await request
          .clone()
          .json()
          .then((body) => String((body as { url?: unknown }).url ?? ''))
          .catch(() => '');
        const response = await gateway.fetch(request);
        // Authentication, authorization, limits and body checks come first: only a served call is a snapshot.
        if (response.status !== 200) return response;
        const first = firstKey.get(url);
        if (first === undefined) {
          firstKey.set(url, key);
          return response;
        }
        if (options.refuseKeyed || key === '' || key !== first) return jsonError(409, 'snapshot_exists');
        return response;
      },
      // Declared write-like in the config: its OpenAPI operation says x-write-like (check --openapi reads it).
      {
        config: {
          tools: {
            'web.snapshot': {
              path: SNAPSHOT_PATH,
              tiers: ['verified'],
              write_like: true,
            },
          },
        },
      },
      (gateway) => ({
        ...tokensOf(gateway),
        tools: ['web.search', 'web.fetch', options.declaration ?? SNAPSHOT_WRITE_LIKE],
      }),
    )(on);
  };
}

/** Declared write-like, it conforms: every repeat the suite sends carries the first call's key. */
export const WRITE_LIKE_VALID: ProofTarget[] = [
  {
    id: 'write-like-snapshot',
    description:
      'an extra write-like tool (web.snapshot, declared so) that refuses a repeat of a URL without the first call’s Idempotency-Key with 409',
    start: snapshotGateway(),
  },
  {
    id: 'write-like-in-progress-409',
    description:
      'the same write-like tool holding each call 200 ms: a copy sent while its twin with the same Idempotency-Key is in progress gets 409 idempotency_key_in_use (the IETF draft), the same answer once sent again',
    start: snapshotGateway({ holdMs: 200 }),
  },
];

export const WRITE_LIKE_FAULTY: ProofTarget[] = [
  {
    id: 'write-like-key-ignored',
    description:
      'a write-like tool (web.snapshot, declared so) that refuses a repeat even when it carries the first call’s Idempotency-Key',
    breaks: 'retry.sequential',
    start: snapshotGateway({ refuseKeyed: true }),
  },
];
