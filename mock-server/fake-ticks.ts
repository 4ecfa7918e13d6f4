/*
 * fetch and msw run on promise jobs, `process.nextTick` and `queueMicrotask`. A runner's fake timers that fake
 * the last two (jest's `useFakeTimers()` fakes every one by default) hold the request before msw sees it, and
 * it goes out for real: `getaddrinfo ENOTFOUND gateway.test`. The test helpers say so at once, naming the fix.
 */

// The real ones, as found when the harness was loaded (before a test installs fake timers).
const realNextTick = process.nextTick;
const realQueueMicrotask = globalThis.queueMicrotask;

/** Which of `process.nextTick` and `queueMicrotask` a runner's fake timers replaced (none: []). */
function fakedTicks(): string[] {
  return [
    ...(process.nextTick !== realNextTick ? ['process.nextTick'] : []),
    ...(globalThis.queueMicrotask !== realQueueMicrotask ? ['queueMicrotask'] : []),
  ];
}

/** What to do about faked ticks, in one message naming the fix; undefined when none is faked. */
export function fakedTicksMessage(): string | undefined {
  const faked = fakedTicks();
  if (faked.length === 0) return undefined;
  return `Fake timers replaced ${faked.join(' and ')}, which fetch and msw run on: a request never reaches the gateway's msw handlers and goes out for real (getaddrinfo ENOTFOUND gateway.test). Keep them real: jest.useFakeTimers({ now, doNotFake: ['nextTick', 'queueMicrotask'] }); with vitest, leave 'nextTick' and 'queueMicrotask' out of toFake (vi.useFakeTimers({ now }) does).`;
}

/**
 * msw intercepts the global fetch and node:http, not a client with its own socket layer: undici's own
 * `fetch`, `request` or a `Pool` (`import { fetch } from 'undici'`) go out for real (ENOTFOUND gateway.test).
 */
export const OWN_SOCKETS_HINT =
  "If the agent calls undici's own fetch, request or a Pool (import { fetch } from 'undici'), msw does not intercept it: give the agent globalThis.fetch, or serve the gateway on loopback (const { url } = await serve(gateway, { port: 0 }), from 'agent-tool-gateway-harness') and give the agent that url.";
