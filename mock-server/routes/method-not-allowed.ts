import { GatewayError } from '../errors.ts';

/**
 * The methods each path answers. Routes declare them here instead of registering a catch-all 405 route:
 * a second handler on every path would push every request onto Hono's slower multi-handler path. The
 * gateway's not-found handler asks `error` whether an unmatched request was a wrong method on a known path.
 */
export function createMethodTable() {
  const paths = new Map<string, string[]>();
  // Paths with parameters (`/__admin/agents/:id`): each parameter stands for one segment.
  const patterns: { pattern: RegExp; allow: string[] }[] = [];
  return {
    /** Declares what a path answers; `GET` implies `HEAD` (Hono answers HEAD with the GET handler). */
    declare(path: string, allowed: string[]) {
      const allow = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
      if (!path.includes('/:')) paths.set(path, allow);
      else {
        const source = path
          .split('/')
          .map((segment) =>
            segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/');
        patterns.push({ pattern: new RegExp(`^${source}$`), allow });
      }
    },
    /** 405 with `Allow` for a known path, or undefined when the path is unknown (a 404). */
    error(method: string, path: string): GatewayError | undefined {
      const allow = paths.get(path) ?? patterns.find((p) => p.pattern.test(path))?.allow;
      if (!allow) return undefined;
      return new GatewayError('method_not_allowed', {
        message: `${method} is not allowed on ${path}; use ${allow.filter((m) => m !== 'HEAD').join(' or ')}.`,
        details: { allowed: allow },
        headers: { allow: allow.join(', ') },
      });
    },
  };
}

export type MethodTable = ReturnType<typeof createMethodTable>;
