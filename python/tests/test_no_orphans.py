"""No gateway outlives the pytest run that started it, however the run ends (SIGTERM, SIGKILL, a crash).

A pytest run with the plugin is started as a process of its own; its tests start two gateways (two
scenarios), write their process ids to a file and wait. The run is then ended by a signal, and every
gateway it started must be gone within a bound (generous: the machine may be loaded; typically a second).
"""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

# How long the gateways may take to notice and stop: far above what it takes, so load never fails it.
BOUND_S = 30

INNER = textwrap.dedent(
    """
    import os
    import time

    import pytest

    PIDS = os.environ["NO_ORPHANS_PIDS"]


    def _note(gateway):
        with open(PIDS, "a") as handle:
            handle.write(f"{gateway.process._child.pid}\\n")


    def test_one(agent_gateway):
        _note(agent_gateway)


    @pytest.mark.agent_gateway(scenario="burst-429")
    def test_two_then_wait(agent_gateway):
        _note(agent_gateway)
        with open(PIDS, "a") as handle:
            handle.write("ready\\n")
        if os.environ.get("NO_ORPHANS_CRASH"):
            os._exit(70)
        time.sleep(600)
    """
)


def _alive(pid):
    """Whether the process runs (a zombie waiting for a parent that does not reap counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _run_until_ready(tmp_path, env_extra=None):
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(INNER)
    pids = tmp_path / "pids.txt"
    env = dict(os.environ, NO_ORPHANS_PIDS=str(pids), **(env_extra or {}))
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 240
    lines = []
    while time.monotonic() < deadline and "ready" not in lines:
        ended = run.poll() is not None
        lines = pids.read_text().split() if pids.exists() else []
        if ended:
            break
        time.sleep(0.1)
    if "ready" not in lines:
        run.kill()
        pytest.fail(f"the inner pytest run did not start its gateways (exit code {run.poll()})")
    return run, [int(line) for line in lines if line != "ready"]


def _gone_within(pids, bound):
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:
        # Ours to end: the test must not leave them either way.
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.skipif(os.name != "posix", reason="signals and /proc: POSIX only")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_gateways_end_with_the_run_that_started_them(tmp_path, how):
    run, pids = _run_until_ready(tmp_path)
    assert len(pids) == 2 and all(_alive(pid) for pid in pids)
    run.send_signal(getattr(signal, how))
    run.wait(60)
    assert _gone_within(pids, BOUND_S) == [], f"gateways still running {BOUND_S} s after {how} of pytest"


@pytest.mark.skipif(os.name != "posix", reason="signals and /proc: POSIX only")
def test_gateways_end_when_the_run_crashes(tmp_path):
    run, pids = _run_until_ready(tmp_path, {"NO_ORPHANS_CRASH": "1"})
    assert run.wait(60) == 70
    assert len(pids) == 2
    assert _gone_within(pids, BOUND_S) == [], f"gateways still running {BOUND_S} s after pytest crashed"
