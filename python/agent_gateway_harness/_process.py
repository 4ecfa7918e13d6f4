"""Starting and stopping `agent-gateway serve --port 0` as a child process, its URL read from its output."""

import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import tempfile
import threading

from ._node import find_node
from .errors import AgentGatewayError

BUNDLED_CLI = os.path.join(os.path.dirname(__file__), "_gateway", "cli", "agent-gateway.mjs")
_LISTENING = re.compile(r"listening on (http://\S+)")


def gateway_command():
    """How to run the `agent-gateway` CLI: $AGENT_GATEWAY_CLI (a .mjs/.js path or a command), else the bundle."""
    given = os.environ.get("AGENT_GATEWAY_CLI")
    if given:
        if os.path.isfile(given):
            if given.endswith((".mjs", ".js", ".cjs")):
                return [find_node(), given]
            return [given]
        return shlex.split(given)
    if not os.path.isfile(BUNDLED_CLI):
        raise AgentGatewayError(
            "agent_gateway_harness was installed without its bundled gateway (_gateway/cli/agent-gateway.mjs): "
            "run `npm install` in the clone of the harness before `pip install ./python`, or set "
            "AGENT_GATEWAY_CLI to the clone's cli/agent-gateway.mjs (or to a command such as "
            "`npx --no-install agent-gateway`)."
        )
    return [find_node(), BUNDLED_CLI]


def _config_file(config):
    """A path for --config: a given path as is, a dict written to a temporary JSON file."""
    if config is None:
        return None
    if isinstance(config, dict):
        handle = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="agent-gateway-", delete=False)
        with handle:
            json.dump(config, handle)
        return handle.name
    return os.fspath(config)


class GatewayProcess:
    """One `agent-gateway serve` process: its URL, its admin key, what it printed, and stop()."""

    def __init__(self, scenario=None, config=None, start_timeout=None):
        self.scenario = scenario
        self.admin_key = "pytest-" + secrets.token_hex(12)
        self._config_path = _config_file(config)
        self._temporary_config = isinstance(config, dict)
        # --exit-with-stdin: the gateway stops when the pipe on its stdin closes, which the kernel does when
        # this process ends, however it ends (SIGTERM, SIGKILL, a crash): no gateway outlives the test run.
        args = ["serve", "--port", "0", "--host", "127.0.0.1", "--exit-with-stdin"]
        if scenario:
            args += ["--scenario", scenario]
        if self._config_path:
            args += ["--config", self._config_path]
        env = dict(os.environ, AGENT_GATEWAY_ADMIN_KEY=self.admin_key)
        self._lines = []
        self._listening = threading.Event()
        self.url = None
        self.command = gateway_command() + args
        try:
            self._child = subprocess.Popen(
                self.command,
                # Never written to; its end in this process is not inherited by other children (PEP 446).
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=os.name == "posix",
            )
        except OSError as error:
            raise AgentGatewayError(f"could not start the gateway ({shlex.join(self.command)}): {error}") from None
        self._reader = threading.Thread(target=self._read, name="agent-gateway-output", daemon=True)
        self._reader.start()
        timeout = start_timeout or float(os.environ.get("AGENT_GATEWAY_START_TIMEOUT", "120"))
        # Waits for the URL line, or the process's end; bounded, so a gateway that hangs fails the test.
        self._listening.wait(timeout)
        if self.url is None:
            self.stop()
            raise AgentGatewayError(
                f"the gateway did not start ({shlex.join(self.command)}):\n{self.output()}"
                if self._child.returncode is not None
                else f"the gateway printed no URL within {timeout:.0f} s ({shlex.join(self.command)}):\n{self.output()}"
            )

    def _read(self):
        for line in self._child.stdout:
            self._lines.append(line)
            if self.url is None:
                found = _LISTENING.search(line)
                if found:
                    self.url = found.group(1)
                    self._listening.set()
        self._child.wait()
        self._listening.set()

    def exit_code(self):
        """None while the process runs; its exit code once it has ended (negative: killed by that signal)."""
        return self._child.poll()

    def output(self):
        """Everything the gateway printed so far (its startup text names agents, API keys and limits)."""
        return "".join(self._lines)

    def stop(self):
        """Stops the process (SIGTERM to its process group, then SIGKILL after 10 s)."""
        child = self._child
        try:
            child.stdin.close()
        except OSError:
            pass
        if child.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(child.pid, signal.SIGTERM)
                else:
                    child.terminate()
                child.wait(10)
            except subprocess.TimeoutExpired:
                if os.name == "posix":
                    os.killpg(child.pid, signal.SIGKILL)
                else:
                    child.kill()
                child.wait(10)
            except ProcessLookupError:
                pass
        if self._temporary_config and self._config_path:
            try:
                os.unlink(self._config_path)
            except OSError:
                pass
