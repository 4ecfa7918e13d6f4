import { CliError } from './cli-options.ts';

/** Where the admin API is and the key it needs, as the admin commands take them. */
export interface AdminTarget {
  baseUrl: string;
  adminKey: string;
}

/** The gateway's JSON error body, as far as a command explains it. */
interface ErrorBody {
  code?: string;
  message?: string;
}

/** Why the admin API refused, in one line a person can act on. */
function refusal(target: AdminTarget, status: number, body: ErrorBody, path: string): string {
  const said = [body.code, body.message].filter(Boolean).join(': ');
  if (status === 401) return `The gateway at ${target.baseUrl} wants the admin key (${said}).`;
  if (status === 403 && body.code === 'admin_key_invalid')
    return `The gateway at ${target.baseUrl} refused the admin key: it is not the one serve was started with.`;
  if (status === 404 && path === '/__admin')
    return `No admin API at ${target.baseUrl}: start the gateway with --admin-key (or AGENT_GATEWAY_ADMIN_KEY).`;
  return `The gateway refused ${path}: ${status}${said ? ` ${said}` : ''}`;
}

/**
 * Calls the admin API: the key in X-Admin-Key, JSON in and out, 15 s at most. Anything but a 2xx, or no
 * answer, is a CliError (exit 2) saying what to do; a 404 on an admin path first checks whether the
 * admin API is there at all, so "not enabled" is not mistaken for "no such agent".
 *
 * @example
 * const clock = await adminCall(target, 'POST', '/__admin/clock/advance', { seconds: 5 });
 */
export async function adminCall<T = Record<string, unknown>>(
  target: AdminTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${target.baseUrl}${path}`, {
      method,
      headers: {
        'x-admin-key': target.adminKey,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    const cause = (error as Error).cause as { code?: string; message?: string } | undefined;
    throw new CliError(
      `Cannot reach the gateway at ${target.baseUrl}: ${cause?.code ?? cause?.message ?? (error as Error).message} (is it running? agent-gateway serve --admin-key KEY)`,
    );
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    throw new CliError(
      `${target.baseUrl}${path} answered ${response.status} with something that is not JSON: is it the reference gateway?`,
    );
  }
  if (response.ok) return parsed as T;
  const error = parsed as ErrorBody;
  if (response.status === 404 && path !== '/__admin') {
    // Is there an admin API at all? Its index answers 200 with the key, 404 without an admin API.
    await adminCall(target, 'GET', '/__admin');
  }
  throw new CliError(refusal(target, response.status, error, path));
}
