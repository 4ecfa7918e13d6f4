// `npm run test:python` (part of `npm test`): the Python package as a user gets it. Builds the bundled
// gateway from the sources, builds the wheel (pip wheel ./python: hatchling, pinned in pyproject.toml),
// installs it with the pinned test requirements (python/requirements-test.txt) into a fresh virtual
// environment, and runs the plugin's own pytest suite (python/tests) against real Python agents.
// Exit: pytest's code (0 all passed; 1 tests failed; 2-4 interrupted, internal or usage error), 5 (no test
// collected) counts as a failure, and any step before pytest failing exits 1 naming the step.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPythonGateway } from './python-gateway.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const python = process.env.PYTHON ?? 'python3';
const work = mkdtempSync(join(tmpdir(), 'agent-gateway-python-'));
const venv = join(work, 'venv');
const bin = (name) => join(venv, process.platform === 'win32' ? 'Scripts' : 'bin', name);
// What a developer's shell may set must not change what is tested: the wheel's own gateway, found by PATH.
const env = { ...process.env, AGENT_GATEWAY_EXPECT_INSTALLED: '1', PIP_DISABLE_PIP_VERSION_CHECK: '1' };
delete env.AGENT_GATEWAY_CLI;
delete env.AGENT_GATEWAY_NODE;

function step(title, command, args, options = {}) {
  process.stdout.write(`test:python: ${title}\n`);
  const run = spawnSync(command, args, { cwd: root, env, stdio: 'inherit', ...options });
  if (run.error) return { status: null, error: run.error };
  return run;
}

function fail(message) {
  process.stderr.write(`test:python: ${message}\n`);
  rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

let code = 1;
try {
  const version = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
  });
  if (version.status !== 0)
    fail(
      `${python} not found: the Python package's tests need Python 3.9+ with venv (set $PYTHON to another)`,
    );
  process.stdout.write(`test:python: Python ${version.stdout.trim()} (${python})\n`);
  await buildPythonGateway(root);
  const wheels = join(work, 'wheels');
  if (
    step('building the wheel', python, ['-m', 'pip', 'wheel', '--no-deps', '-q', '-w', wheels, './python'])
      .status !== 0
  )
    fail('pip wheel ./python failed (see above)');
  const wheel = readdirSync(wheels).find((name) => name.endsWith('.whl'));
  if (!wheel) fail(`pip wheel wrote no wheel into ${wheels}`);
  if (step('creating a fresh virtual environment', python, ['-m', 'venv', venv]).status !== 0)
    fail(`${python} -m venv failed (on Debian: apt-get install python3-venv)`);
  const install = step('installing the wheel and the pinned test requirements', bin('python'), [
    '-m',
    'pip',
    'install',
    '-q',
    '-r',
    'python/requirements-test.txt',
    join(wheels, wheel),
  ]);
  if (install.status !== 0) fail('pip install failed (see above)');
  // From the clone's root, with the venv's pytest: the package is imported from the venv, not python/.
  const pytest = step('running the plugin suite (python/tests)', bin('pytest'), [
    'python/tests',
    '-p',
    'no:cacheprovider',
    '-ra',
  ]);
  code = pytest.status ?? 1;
  if (code === 5) process.stderr.write('test:python: pytest collected no test: that is a failure\n');
  else if (code !== 0) process.stderr.write(`test:python: pytest exited with ${code}\n`);
  if (code === 5) code = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(code);
