/**
 * The package as its users get it: packed with `npm pack`, installed from the tarball into scratch projects
 * under a temporary folder the way users install (`npm install --save-dev`, no flags, no lockfile: today's
 * latest versions of every dependency in its range; a peer range that does not admit the test tools is an
 * ERESOLVE failure here, an engines range that does not admit the Node an EBADENGINE failure), and used on
 * each Node line of the run. Each (project, Node) cell is installed by npm running on that Node:
 *   (a) a plain ES module imports the gateway and serves it with `node` (esm/serve.mjs);
 *   (b) strict TypeScript projects (module NodeNext, skipLibCheck false) compile against the types of
 *       every entry (entries.ts), TypeScript 5 in the vitest projects, 7 in the jest one;
 *   (c) vitest: msw 2 + vitest 4, and msw 3 + vitest 5, each running vitest-project/: the README example,
 *       per-test grading (a test whose agent never reached the gateway fails), agents on fake timers (one
 *       that gives up) and an agent on the openai SDK whose own retry policy meets a 429 with Retry-After,
 *       on real and fake timers;
 *   (d) jest 30 + msw 3 (native ES modules, modern fake timers; no vitest installed), the same tests in
 *       jest-project/, compiled by tsc first;
 *   (e) `npx --no-install agent-gateway` runs from the installed package (--help, token, serve with the
 *       dashboard's files and /openapi.json).
 * Once per run: the packed files, and the declarations' imports (test/support/declaration-imports.ts: no
 * type of an optional part's dependency, each test tool only in its own entry).
 * The files under esm/, vitest-project/ and jest-project/ are the README's and guide's examples as they run.
 *
 * Which Node lines: `npm run test:consumers` (the consumers stage of `npm test`) runs every cell on this
 * process's Node; `npm run test:consumers:all` on each maintained line, 22, 24 and 26 (`--nodes 22,26`
 * names others). A failure in a dependency's code names the package and the version installed
 * (`upstreamNamed`). It needs the npm registry and, for a Node line other than this process's, that line's
 * binary (the node-<platform>-<arch> package, cached under the temporary folder). Nothing here is timed:
 * the start-up figures come from `npm run bench:cli`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { declarationViolations } from '../support/declaration-imports.ts';
import {
  cleanEnv,
  expectSuccess,
  installedMajor,
  installedVersions,
  killGroup,
  MINUTE,
  nodeBinDir,
  npmInstall,
  progress,
  run,
  upstreamNamed,
} from './scratch-tools.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const PACKAGE_NAME = 'agent-tool-gateway-harness';

/** The maintained Node lines (package.json engines), which `--nodes all` runs. */
const NODE_LINES = [22, 24, 26];
const THIS_NODE = Number(process.versions.node.split('.')[0]);
const { values: flags } = parseArgs({ options: { nodes: { type: 'string' } } });
const NODES =
  flags.nodes === undefined
    ? [THIS_NODE]
    : flags.nodes === 'all'
      ? NODE_LINES
      : flags.nodes.split(',').map((major) => {
          const n = Number(major.trim());
          if (!Number.isInteger(n) || n < 1)
            throw new Error(`--nodes: "${major}" is not a Node major version`);
          return n;
        });

/**
 * The scratch projects: the example each copies and what it installs beside the tarball, given the Node
 * major it runs on (the test tools' majors are checked after the install: the matrix is what it says).
 */
const PROJECTS = {
  esm: { example: 'esm', deps: (_node: number): string[] => [], majors: {} },
  vitest4: {
    example: 'vitest-project',
    deps: (node: number) => [
      'msw@^2.12.0',
      'vitest@^4.0.0',
      'openai@^7.0.0',
      '@anthropic-ai/sdk@^1.0.0',
      'typescript@^5.9.0',
      `@types/node@^${node}.0.0`,
    ],
    majors: { msw: 2, vitest: 4 },
  },
  vitest5: {
    example: 'vitest-project',
    deps: (node: number) => [
      'msw@^3.0.0',
      'vitest@^5.0.0',
      'openai@^7.0.0',
      '@anthropic-ai/sdk@^1.0.0',
      'typescript@^5.9.0',
      `@types/node@^${node}.0.0`,
    ],
    majors: { msw: 3, vitest: 5 },
  },
  jest: {
    example: 'jest-project',
    deps: (node: number) => [
      'msw@^3.0.0',
      'jest@^30.0.0',
      '@jest/globals@^30.0.0',
      'openai@^7.0.0',
      '@anthropic-ai/sdk@^1.0.0',
      'typescript@^7.0.0',
      `@types/node@^${node}.0.0`,
    ],
    majors: { msw: 3, jest: 30 },
  },
} as const;
type ProjectName = keyof typeof PROJECTS;
const PROJECT_NAMES = Object.keys(PROJECTS) as ProjectName[];

const work = mkdtempSync(join(tmpdir(), 'agent-gateway-consumers-'));
const projectDir = (name: ProjectName, node: number) => join(work, `${name}-node${node}`);
/** Where each Node major's binary is: this process's node for its own major, the others downloaded. */
const nodeDirs = new Map<number, string>();
let tarball = '';
let packedFiles: string[] = [];
let failed = false;

/** A test body that records failure, so the scratch folder is kept for a look. */
const step = (body: () => Promise<void>) => async () => {
  try {
    await body();
  } catch (error) {
    failed = true;
    throw error;
  }
};

/** Runs `jobs` with at most `limit` at a time (installs: each is an npm with its own network and CPU use). */
async function inTurns<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return results;
}

before(
  step(async () => {
    progress(`scratch folder ${work}; Node ${NODES.join(', ')}`);
    for (const major of NODES)
      nodeDirs.set(major, major === THIS_NODE ? dirname(process.execPath) : await nodeBinDir(major));
    progress('npm pack (runs prepare: the build)');
    const packed = await run('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: ROOT,
      timeoutMs: 3 * MINUTE,
    });
    expectSuccess('npm pack', packed);
    const json = packed.output.slice(packed.output.indexOf('[\n'));
    const [info] = JSON.parse(json.slice(0, json.lastIndexOf(']') + 1)) as {
      filename: string;
      files: { path: string }[];
    }[];
    assert.ok(info, 'npm pack printed no package');
    tarball = join(work, info.filename);
    packedFiles = info.files.map((f) => f.path);

    const started = Date.now();
    const cells = NODES.flatMap((node) => PROJECT_NAMES.map((name) => ({ name, node })));
    progress(`installing the tarball into ${cells.length} scratch projects (with their test tools)`);
    await inTurns(
      cells.map(({ name, node }) => async () => {
        const project = PROJECTS[name];
        const dir = projectDir(name, node);
        const deps = project.deps(node);
        cpSync(join(HERE, project.example), dir, { recursive: true });
        writeFileSync(
          join(dir, 'package.json'),
          `${JSON.stringify({ name: `${name}-consumer`, private: true, type: 'module' }, null, 2)}\n`,
        );
        const output = await npmInstall(dir, [tarball, ...deps], [...deps, 'the package'].join(', '), {
          nodeDir: nodeDirs.get(node),
        });
        // npm only warns about an engines range that leaves this Node out: here that is a failure.
        assert.doesNotMatch(
          output,
          /EBADENGINE/,
          `${name} on Node ${node}: npm warned EBADENGINE (a package's engines leave this Node out):\n${output}`,
        );
        for (const [tool, major] of Object.entries(project.majors))
          assert.equal(installedMajor(dir, tool), major, `${name}: ${tool} ${major} was not installed`);
        const versions = installedVersions(dir);
        const direct = [PACKAGE_NAME, ...deps.map((d) => d.slice(0, d.lastIndexOf('@')))];
        progress(
          `  ${name} on Node ${node}: ${direct.map((d) => `${d}@${versions.get(d) ?? '?'}`).join(' ')}`,
        );
      }),
      4,
    );
    progress(`installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }),
  { timeout: 20 * MINUTE },
);

after(() => {
  if (failed) progress(`kept ${work} for a look`);
  else rmSync(work, { recursive: true, force: true });
});

/** Expects success of a command run in a scratch project; a failure names the packages its output is in. */
function expectSuccessIn(dir: string, what: string, result: Awaited<ReturnType<typeof run>>) {
  if (result.code === 0) return;
  assert.fail(`${what} exited with ${result.code}${upstreamNamed(result.output, dir)}:\n${result.output}`);
}

describe('the packed package', () => {
  it(
    'ships dist, the fixtures the runtime reads, the bin, README and LICENSE: no sources, tests or proof gateways',
    step(async () => {
      for (const needed of [
        'dist/mock-server/index.js',
        'dist/mock-server/index.d.ts',
        'dist/mock-server/index.js.map',
        'dist/cli/agent-gateway.js',
        'cli/agent-gateway.mjs',
        'fixtures/config/default.yaml',
        'README.md',
        'LICENSE',
      ])
        assert.ok(packedFiles.includes(needed), `${needed} is not in the package`);
      for (const folder of ['fixtures/search/', 'fixtures/pages/', 'fixtures/scenarios/'])
        assert.ok(
          packedFiles.some((f) => f.startsWith(folder)),
          `${folder} is not in the package`,
        );
      const unwanted = packedFiles.filter(
        (f) =>
          /\.test\.|^test\/|^fixtures\/gateways\/|^node_modules\/|^\.ci\//.test(f) ||
          (f.endsWith('.ts') && !f.endsWith('.d.ts')),
      );
      assert.deepEqual(unwanted, []);
    }),
  );

  it(
    "its declarations import no optional part's dependency (ioredis), and each test tool only from its own entry",
    step(async () => {
      const installed = join(projectDir('esm', NODES[0] as number), 'node_modules', PACKAGE_NAME);
      assert.deepEqual(declarationViolations(installed), []);
    }),
  );
});

/** The node binary of a major version (found by `before`). */
const nodeOf = (major: number) => join(nodeDirs.get(major) as string, 'node');

/** The test files each runner project runs, and how many tests pass in all. */
const EXPECTED_TESTS = { vitest: 12, jest: 10 };

/** What the runner printed as its duration (vitest's "Duration", jest's "Time:"), for the log. */
const durationOf = (output: string) =>
  /Duration\s+(\S+)/.exec(output)?.[1] ?? /Time:\s+(.+)/.exec(output)?.[1]?.trim() ?? '?';

/** Registered per Node line of the run; `before` has found the binaries by the time they run. */
for (const major of NODES) {
  describe(`Node ${major}`, () => {
    const runtime = () => ({ dir: nodeDirs.get(major) as string });
    const node = () => nodeOf(major);

    // The three compilations are independent and depend on no timing: run together.
    describe('(b) strict type checks against every entry', { concurrency: true }, () => {
      for (const name of ['vitest4', 'vitest5'] as const)
        it(
          `(b) a strict TypeScript 5 project with ${name.replace('vitest', 'vitest ')} (NodeNext, skipLibCheck false) compiles against the types of every entry`,
          step(async () => {
            const dir = projectDir(name, major);
            const tsc = join(dir, 'node_modules/typescript/bin/tsc');
            const result = await run(node(), [tsc, '-p', '.'], { cwd: dir, timeoutMs: 3 * MINUTE });
            expectSuccessIn(dir, `tsc (TypeScript 5, ${name} project, Node ${major})`, result);
          }),
        );

      it(
        '(b, d) a strict TypeScript 7 jest project compiles against the types of every entry without vitest installed',
        step(async () => {
          const dir = projectDir('jest', major);
          assert.equal(
            existsSync(join(dir, 'node_modules/vitest')),
            false,
            'vitest is installed in the jest project',
          );
          const tsc = join(dir, 'node_modules/typescript/bin/tsc');
          const result = await run(node(), [tsc, '-p', '.'], { cwd: dir, timeoutMs: 3 * MINUTE });
          expectSuccessIn(dir, `tsc (TypeScript 7, jest project, Node ${major})`, result);
          assert.ok(
            readdirSync(join(dir, 'build')).includes('agent.test.js'),
            'tsc wrote no build/agent.test.js',
          );
        }),
      );
    });

    for (const name of ['vitest4', 'vitest5'] as const) {
      const { majors } = PROJECTS[name];
      it(
        `(c) msw ${majors.msw} + vitest ${majors.vitest}: README example, per-test grading, fake timers, the openai and Anthropic SDKs' retries`,
        step(async () => {
          const dir = projectDir(name, major);
          const result = await run(node(), [join(dir, 'node_modules/vitest/vitest.mjs'), 'run'], {
            cwd: dir,
            nodeDir: runtime().dir,
            timeoutMs: 5 * MINUTE,
          });
          expectSuccessIn(dir, `vitest run (${name}, Node ${major})`, result);
          assert.match(result.output, new RegExp(`Tests\\s+${EXPECTED_TESTS.vitest} passed`));
          // Nothing left unhandled (an agent that gives up on fake timers): vitest would say "Errors".
          assert.doesNotMatch(result.output, /Unhandled|Errors\s+\d+ error/);
          progress(
            `  vitest ${majors.vitest}, msw ${majors.msw}, Node ${major}: ${durationOf(result.output)}`,
          );
        }),
      );
    }

    it(
      '(d) msw 3 + jest 30 (native ES modules): the same tests, compiled by tsc',
      step(async () => {
        const dir = projectDir('jest', major);
        const result = await run(
          node(),
          ['--experimental-vm-modules', join(dir, 'node_modules/jest/bin/jest.js')],
          { cwd: dir, nodeDir: runtime().dir, timeoutMs: 5 * MINUTE },
        );
        expectSuccessIn(dir, `jest (Node ${major})`, result);
        assert.match(
          result.output,
          new RegExp(`Tests:\\s+${EXPECTED_TESTS.jest} passed, ${EXPECTED_TESTS.jest} total`),
        );
        progress(`  jest 30, msw 3, Node ${major}: ${durationOf(result.output)}`);
      }),
    );

    it(
      '(a) a plain ES module imports the gateway and serves it',
      step(async () => {
        const dir = projectDir('esm', major);
        const result = await run(node(), ['serve.mjs'], { cwd: dir, timeoutMs: 2 * MINUTE });
        expectSuccessIn(dir, `node serve.mjs (Node ${major})`, result);
        assert.match(result.output, /health 200, whoami 200 as agent-verified, conformance pass/);
      }),
    );

    it(
      '(e) npx --no-install agent-gateway: --help, token, serve',
      step(async () => {
        const cwd = projectDir('esm', major);
        const npx = (args: string[]) =>
          run('npx', ['--no-install', 'agent-gateway', ...args], {
            cwd,
            nodeDir: runtime().dir,
            timeoutMs: MINUTE,
          });
        const version = await run('node', ['--version'], { cwd, nodeDir: runtime().dir, timeoutMs: MINUTE });
        assert.equal(
          version.output.trim(),
          (await run(node(), ['--version'], { cwd, timeoutMs: MINUTE })).output.trim(),
        );

        const help = await npx(['--help']);
        expectSuccess('agent-gateway --help', help);
        for (const command of ['serve', 'token', 'check', 'report', 'admin', 'openapi'])
          assert.match(help.output, new RegExp(command));

        // With a signing secret configured the token is minted locally by the package: a gateway of the same
        // package with that secret accepts it. (Without one, each gateway process signs with a random secret
        // and `token` asks the running gateway: serveAnswersHealth covers that.)
        const secret = 'consumer-test-signing-secret-0123456789abcdef';
        const minted = await run('npx', ['--no-install', 'agent-gateway', 'token', 'agent-verified'], {
          cwd,
          nodeDir: runtime().dir,
          env: { AGENT_GATEWAY_SIGNING_SECRET: secret },
          timeoutMs: MINUTE,
        });
        expectSuccess('agent-gateway token agent-verified', minted);
        const token = minted.output.trim().split('\n').at(-1) ?? '';
        const verify = await run(
          node(),
          [
            '--input-type=module',
            '-e',
            "import { createGateway } from 'agent-tool-gateway-harness'; const r = createGateway({ config: { identity: { signing_secret: process.argv[2] } } }).idp.verify(process.argv[1]); console.log(r.ok ? r.identity.agentId : r.reason);",
            token,
            secret,
          ],
          { cwd, timeoutMs: MINUTE },
        );
        expectSuccess('verifying the token', verify);
        assert.equal(verify.output.trim(), 'agent-verified');

        await serveAnswersHealth(cwd, runtime().dir);
      }),
    );
  });
}

/**
 * `npx --no-install agent-gateway serve --port 0 --admin-key K` starts, answers /v1/health, serves the
 * dashboard's files from the package (no key needed for those) and /openapi.json, and is stopped.
 */
async function serveAnswersHealth(cwd: string, nodeDir: string) {
  const child = spawn(
    'npx',
    ['--no-install', 'agent-gateway', 'serve', '--port', '0', '--admin-key', 'consumer-admin-key'],
    {
      cwd,
      env: cleanEnv(nodeDir),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let output = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`serve printed no URL within 60 s:\n${output}`)),
        MINUTE,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const found = /listening on (http:\/\/\S+)/.exec(output)?.[1];
        if (found) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('close', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited with ${code}:\n${output}`));
      });
    });
    const health = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(MINUTE) });
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status?: string }).status, 'ok');
    for (const asset of ['/__admin/ui', '/__admin/ui/dashboard.js', '/__admin/ui/dashboard.css']) {
      const response = await fetch(`${url}${asset}`, { signal: AbortSignal.timeout(MINUTE) });
      assert.equal(response.status, 200, `${asset} from the installed package`);
      assert.ok((await response.text()).length > 500, `${asset} has its content`);
    }
    const openapi = await fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(MINUTE) });
    assert.equal(((await openapi.json()) as { openapi?: string }).openapi, '3.1.1');
    // No signing secret configured: `token` (no flag but the gateway's URL in the environment, as
    // npm start's default URL is not this one) asks the running gateway, which accepts what it minted.
    const minted = await run('npx', ['--no-install', 'agent-gateway', 'token', 'agent-verified'], {
      cwd,
      nodeDir,
      env: { AGENT_GATEWAY_BASE_URL: url },
      timeoutMs: MINUTE,
    });
    expectSuccess('agent-gateway token agent-verified (from the running gateway)', minted);
    const whoami = await fetch(`${url}/v1/whoami`, {
      headers: { 'x-agent-identity': minted.output.trim().split('\n').at(-1) ?? '' },
      signal: AbortSignal.timeout(MINUTE),
    });
    assert.equal(whoami.status, 200);
    assert.equal(((await whoami.json()) as { agent?: { id?: string } }).agent?.id, 'agent-verified');
  } finally {
    const closed = new Promise((done) => {
      if (child.exitCode !== null || child.signalCode !== null) done(undefined);
      else child.once('close', done);
    });
    killGroup(child, 'SIGTERM');
    await closed;
  }
}
