import { z } from 'zod';
import { SPEC_ENDPOINT_IDS } from '../../vocabulary/endpoints.ts';
import { TOOL_NAME_PATTERN } from '../../vocabulary/tools.ts';
import { GatewayError } from '../errors.ts';
import { invalidRequestOf } from '../http/read-body.ts';

/** Where a fault can strike on every gateway: the health check, whoami and the spec's tools. */
const FAULT_TARGETS = SPEC_ENDPOINT_IDS;
/** A spec endpoint, or a tool a config declares. */
export type FaultTarget = (typeof FAULT_TARGETS)[number] | (string & {});

/**
 * Where a fault can strike on a gateway with these tools: the health check, whoami, and every tool it
 * serves (the built-in ones and the extra tools its config declares), in that order.
 *
 * @example
 * faultTargets(runtime.tools); // ['health', 'whoami', 'web.search', 'web.fetch', 'web.extract']
 */
export const faultTargets = (tools: readonly { readonly name: string }[]): string[] => [
  ...new Set([...FAULT_TARGETS, ...tools.map((tool) => tool.name)]),
];

/**
 * Why a fault cannot be armed on a gateway whose targets are `targets` (its `match.operation` names no
 * endpoint or tool of it: the fault would never strike), or undefined when it can.
 */
export function unknownFaultTarget(spec: FaultSpec, targets: readonly string[]): string | undefined {
  const operation = spec.match.operation;
  if (operation === undefined || targets.includes(operation)) return undefined;
  return `this gateway has no endpoint or tool "${operation}" (it has ${targets.join(', ')}): a fault on it would never strike`;
}

/** Throws the 400 `invalid_request` (field `match.operation`) for a fault that names no target of the gateway. */
export function assertFaultTarget(spec: FaultSpec, targets: readonly string[]): void {
  const message = unknownFaultTarget(spec, targets);
  if (message === undefined) return;
  throw new GatewayError('invalid_request', {
    message: `match.operation: ${message}`,
    details: { field: 'match.operation', targets: [...targets] },
  });
}

/**
 * A fault to inject, as the admin API and scenario files describe it; declared once: the flags of
 * `agent-gateway admin faults arm` derive from it.
 */
export const faultSpecSchema = z
  .strictObject({
    match: z
      .strictObject({
        operation: z
          .string()
          .regex(TOOL_NAME_PATTERN, 'must be an endpoint or tool name: lower-case words joined by dots')
          .max(64)
          .optional()
          .describe(
            `only requests to this endpoint or tool: ${FAULT_TARGETS.join(', ')} or an extra tool the gateway's config declares (default: any)`,
          ),
        agent: z
          .string()
          .min(1)
          .optional()
          .describe('only requests of this agent (never matches health, which has no agent)'),
      })
      .default({}),
    kind: z
      .enum(['status', 'delay', 'drop'])
      .describe('status: answer an error; delay: wait, then answer normally; drop: close the connection'),
    status: z
      .union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)], {
        error: 'must be 500, 502, 503 or 504',
      })
      .default(503)
      .describe('for kind status: the status answered'),
    retry_after: z
      .number()
      .int()
      .min(0)
      .max(86_400)
      .optional()
      .describe('Retry-After seconds on the 5xx (absent: no Retry-After header)'),
    delay_ms: z
      .number()
      .int()
      .min(0)
      .max(120_000)
      .default(1000)
      .describe('for kind delay: the real milliseconds it waits before answering'),
    count: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        'strike this many times, then disarm (a status or drop fault needs it, or every); absent: forever',
      ),
    every: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(1)
      .describe('strike the 1st matching request, then every n-th (1: every one)'),
  })
  .refine((f) => f.count !== undefined || f.every > 1 || f.kind === 'delay', {
    message:
      'a status or drop fault on every request forever would make the gateway useless: set count or every',
    path: ['count'],
  });

export type FaultSpec = z.output<typeof faultSpecSchema>;
/** A fault as a caller writes it: what the schema defaults (`every`, `status`, `delay_ms`, `match`) may be left out. */
export type FaultSpecInput = z.input<typeof faultSpecSchema>;

/**
 * A fault with the schema's defaults filled in, whoever wrote it (the library, the admin API, a scenario file,
 * the CLI): 400 `invalid_request` naming the first bad field.
 *
 * @example
 * parseFaultSpec({ match: { operation: 'web.fetch' }, kind: 'status', count: 3 }).every; // 1
 */
function parseFaultSpec(input: FaultSpecInput): FaultSpec {
  const result = faultSpecSchema.safeParse(input);
  if (!result.success) throw invalidRequestOf(result.error);
  return result.data;
}

export interface Fault extends FaultSpec {
  id: string;
  /** Matching requests seen so far. */
  seen: number;
  /** Times it struck. */
  fired: number;
}

/**
 * Armed faults. `strike` is asked once per request at the point where a backend would be called; the
 * first fault that matches and is due strikes, and spent faults disappear. Given `targets` (the gateway's
 * endpoints and tools, `faultTargets`), `add` refuses a fault on any other (400 `invalid_request`).
 */
export function createFaultInjector(options: { targets?: () => readonly string[] } = {}) {
  let faults: Fault[] = [];
  let nextId = 1;

  return {
    /** Arms a fault, its defaults filled in as the admin API and scenario files fill them (`parseFaultSpec`). */
    add(input: FaultSpecInput): Fault {
      const spec = parseFaultSpec(input);
      if (options.targets) assertFaultTarget(spec, options.targets());
      const fault: Fault = { ...spec, id: `fault-${nextId++}`, seen: 0, fired: 0 };
      faults.push(fault);
      return fault;
    },
    list: (): readonly Fault[] => faults,
    remove(id: string): boolean {
      const before = faults.length;
      faults = faults.filter((f) => f.id !== id);
      return faults.length < before;
    },
    clear() {
      faults = [];
    },
    /** Takes over the armed faults exactly as another instance has them (shared store). */
    restore(next: readonly Fault[]) {
      faults = next.map((f) => ({ ...f }));
      for (const f of faults) nextId = Math.max(nextId, Number(/^fault-(\d+)$/.exec(f.id)?.[1] ?? 0) + 1);
    },
    /** The armed faults a request to `target` by `agentId` matches, in order, without counting it. */
    matching(target: FaultTarget, agentId?: string): Fault[] {
      if (faults.length === 0) return [];
      return faults.filter(
        (f) =>
          (!f.match.operation || f.match.operation === target) &&
          (!f.match.agent || f.match.agent === agentId),
      );
    },

    strike(target: FaultTarget, agentId?: string): Fault | undefined {
      if (faults.length === 0) return undefined;
      for (const fault of faults) {
        if (fault.match.operation && fault.match.operation !== target) continue;
        if (fault.match.agent && fault.match.agent !== agentId) continue;
        fault.seen += 1;
        if ((fault.seen - 1) % fault.every !== 0) continue;
        fault.fired += 1;
        if (fault.count !== undefined && fault.fired >= fault.count)
          faults = faults.filter((f) => f !== fault);
        return fault;
      }
      return undefined;
    },
  };
}

export type FaultInjector = ReturnType<typeof createFaultInjector>;
