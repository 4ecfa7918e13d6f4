import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SystemBinary } from './system-binary.ts';

/*
 * The container image built and run with podman, as the image's tests and the recipes' tests use it. This
 * machine has no image registry, so the base is made here: a Debian bookworm made by debootstrap from the apt
 * mirror the machine is configured with, imported as a local image (`BASE` of the Dockerfile), cached.
 */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PODMAN: SystemBinary = {
  what: 'podman',
  path: process.env.AGENT_GATEWAY_PODMAN ?? '/usr/bin/podman',
  requireEnv: 'AGENT_GATEWAY_REQUIRE_PODMAN',
  install: 'apt-get install podman runc debootstrap',
};
/**
 * The local base image (no node in it: the Dockerfile's build stage brings Node.js in) and the image built,
 * tagged for this checkout: two checkouts on one machine (podman's store is the user's) never run each
 * other's image.
 */
export const BASE_IMAGE = 'localhost/agent-gateway-test-base:bookworm';
export const IMAGE = `localhost/agent-gateway:test-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`;
const CACHE = join(ROOT, 'node_modules/.cache/agent-gateway-image');

/**
 * podman's environment: a containers.conf without default ulimits (setting rlimits is not permitted in some
 * sandboxes, and runc then refuses to start any container), runc as the runtime (global flag).
 */
export function podmanEnv(): NodeJS.ProcessEnv {
  mkdirSync(CACHE, { recursive: true });
  const conf = join(CACHE, 'containers.conf');
  writeFileSync(conf, '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n');
  return { ...process.env, CONTAINERS_CONF: conf };
}

/** Runs podman (with runc) and returns its stdout; throws with its stderr when it fails. */
export function podman(args: string[], options: { input?: string; timeoutMs?: number } = {}): string {
  const run = spawnSync(PODMAN.path, ['--runtime', 'runc', ...args], {
    env: podmanEnv(),
    encoding: 'utf8',
    input: options.input,
    timeout: options.timeoutMs ?? 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0)
    throw new Error(
      `podman ${args.join(' ')} exited ${run.status ?? run.signal}: ${run.stderr || run.error?.message}`,
    );
  return run.stdout;
}

/** The Debian mirror apt is configured with (deb822 `URIs:` or a one-line `deb URL bookworm ...`). */
export function aptMirror(): string {
  const files = ['/etc/apt/sources.list'];
  if (existsSync('/etc/apt/sources.list.d'))
    for (const name of readdirSync('/etc/apt/sources.list.d'))
      files.push(join('/etc/apt/sources.list.d', name));
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const found =
      /^URIs:\s*(\S+\/debian)\s*$/m.exec(text) ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\s+\S+/m.exec(text);
    if (found?.[1]) return found[1];
  }
  return 'http://deb.debian.org/debian';
}

/**
 * The base image: kept in podman's store between runs; else imported from the root file system tarball cached
 * under node_modules/.cache; else made by debootstrap (about 35 s) into that cache first.
 */
export function ensureBaseImage(): string {
  if (spawnSync(PODMAN.path, ['image', 'exists', BASE_IMAGE], { env: podmanEnv() }).status === 0)
    return BASE_IMAGE;
  const tarball = join(CACHE, 'bookworm-minbase.tar');
  if (!existsSync(tarball)) {
    const dir = join(CACHE, 'rootfs');
    rmSync(dir, { recursive: true, force: true });
    execFileSync('debootstrap', ['--variant=minbase', 'bookworm', dir, aptMirror()], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    });
    execFileSync('tar', ['-C', dir, '-cf', `${tarball}.part`, '.'], { timeout: 120_000 });
    execFileSync('mv', [`${tarball}.part`, tarball]);
    rmSync(dir, { recursive: true, force: true });
  }
  podman(['import', tarball, BASE_IMAGE], { timeoutMs: 180_000 });
  return BASE_IMAGE;
}

/** The CA bundle this machine trusts (a TLS-intercepting proxy's CA is in it), for the build's downloads. */
function caBundle(): string | undefined {
  return [
    process.env.NODE_EXTRA_CA_CERTS,
    process.env.SSL_CERT_FILE,
    '/etc/ssl/certs/ca-certificates.crt',
  ].find((file): file is string => file !== undefined && existsSync(file));
}

let built: string | undefined;

/**
 * Builds the repository's Dockerfile on the local base (docker format: it keeps the HEALTHCHECK), once per
 * process: the image's tests and the recipes' share one file, and a second build, every layer found in the
 * cache, still costs podman 5-15 s of its own work.
 */
export function buildImage(): string {
  if (built) return built;
  ensureBaseImage();
  const ca = caBundle();
  podman(
    [
      'build',
      '--format',
      'docker',
      '--build-arg',
      `BASE=${BASE_IMAGE}`,
      ...(ca ? ['--secret', `id=ca,src=${ca}`] : []),
      '-t',
      IMAGE,
      ROOT,
    ],
    { timeoutMs: 480_000 },
  );
  built = IMAGE;
  return IMAGE;
}

/** A free loopback port (closed again before podman binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * Polls `url` until it answers 200, at most `attempts` times, a second apart: a container's start is
 * waited for by what it answers, never by a fixed sleep. Throws with the container's logs when it never does.
 */
export async function waitForHealth(url: string, container: string, attempts = 120): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`${url} never answered 200; the container's output:\n${podman(['logs', container])}`);
}

/** podman's Docker-compatible API on a unix socket (`podman system service`), for Testcontainers and the SDKs. */
export interface PodmanService {
  socket: string;
  stop(): void;
}

/** Starts `podman system service` on a socket of its own, and waits until it answers GET /_ping. */
export async function startPodmanService(): Promise<PodmanService> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-gateway-podman-'));
  const socket = join(dir, 'podman.sock');
  const child = spawn(PODMAN.path, ['system', 'service', '--time=0', `unix://${socket}`], {
    env: podmanEnv(),
    stdio: 'ignore',
  });
  const stop = () => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 60; i++) {
    const answered = await new Promise<boolean>((resolve) => {
      const ping = request({ socketPath: socket, path: '/_ping' }, (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      });
      ping.on('error', () => resolve(false));
      ping.end();
    });
    if (answered) return { socket, stop };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  stop();
  throw new Error(`podman system service never answered on ${socket}`);
}
