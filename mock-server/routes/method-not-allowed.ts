import type { Hono } from 'hono';
import { GatewayError } from '../errors.ts';
import type { AppEnv } from '../gateway.ts';

/**
 * Registers the 405 answer for every other method on a path. Call it after the path's real handlers:
 * Hono tries routes in registration order, and `GET` handlers also answer `HEAD`.
 */
export function methodNotAllowed(app: Hono<AppEnv>, path: string, allowed: string[]) {
  const allow = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
  app.all(path, (c) => {
    throw new GatewayError('method_not_allowed', {
      message: `${c.req.method} is not allowed on ${path}; use ${allowed.join(' or ')}.`,
      details: { allowed: allow },
      headers: { allow: allow.join(', ') },
    });
  });
}
