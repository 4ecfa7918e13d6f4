/** An admin API answer: its status and its JSON body (`{}` when the body is not JSON). */
export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One admin API call on a fresh connection (`connection: close`: with `--workers` or several instances, each
 * call may reach any of them), with the admin key and a JSON body when given; `signal` bounds the wait.
 */
export async function adminCall(
  url: string,
  adminKey: string,
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<AdminAnswer> {
  const response = await fetch(`${url}/__admin${path}`, {
    method,
    headers: {
      'x-admin-key': adminKey,
      connection: 'close',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return { status: response.status, body: (await response.json().catch(() => ({}))) as AdminAnswer['body'] };
}
