"""The pytest plugin (entry point pytest11): the `agent_gateway` fixture and its mark.

One gateway process per (scenario, config) for the whole session, started when a test first needs it;
every test gets it reset (agents, limits, faults, clock, journal) and graded from its own mark.
"""

import json
import os

import pytest

from ._process import GatewayProcess
from .conformance import Conformance, ConformanceItems
from .errors import AgentGatewayError, NodeNotFoundError
from .gateway import Gateway

MARK = "agent_gateway"


def pytest_addoption(parser):
    group = parser.getgroup("agent_gateway", "conformance suite as pytest items (agent_gateway_harness.conformance)")
    group.addoption(
        "--conformance-base-url",
        dest="agent_gateway_conformance_base_url",
        help="the gateway a Conformance() without a URL checks",
    )
    group.addoption(
        "--conformance-option",
        dest="agent_gateway_conformance_options",
        action="append",
        metavar="ARG",
        help="one argument for `agent-gateway check`, passed as it is (repeatable): "
        "--conformance-option=--strict --conformance-option=--token-command='mint verified'",
    )
    parser.addini("agent_gateway_conformance_base_url", "the gateway a Conformance() without a URL checks")
    parser.addini(
        "agent_gateway_conformance_args",
        "arguments for `agent-gateway check` in every Conformance run (shell words)",
        type="args",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """A Conformance object in a test module, under a test name (`test_*`), is collected as one item per check."""
    if isinstance(obj, Conformance) and collector.funcnamefilter(name):
        return ConformanceItems.from_parent(collector, name=name, suite=obj)
    return None


def pytest_configure(config):
    for mark, text in (
        ("must", "a conformance check of a MUST rule"),
        ("should", "a conformance check of a SHOULD rule"),
        ("conformance", "an item of the conformance suite (agent_gateway_harness.conformance.Conformance)"),
    ):
        config.addinivalue_line("markers", f"{mark}: {text}")
    config.addinivalue_line(
        "markers",
        f"{MARK}(scenario=None, config=None): what the agent_gateway fixture serves: a bundled scenario "
        "(burst-429, flaky-5xx, ...) or a scenario file, and a config file path or dict laid over the default.",
    )


class _Processes:
    """The session's gateway processes, one per (scenario, config)."""

    def __init__(self):
        self._running = {}
        self._no_node = None

    def get(self, scenario, config):
        if self._no_node is not None:
            # Node.js was looked for once: the first test showed where; the others say what, in one line.
            pytest.fail(f"{type(self._no_node).__name__}: {self._no_node}", pytrace=False)
        key = (str(scenario), json.dumps(config, sort_keys=True, default=str))
        self._drop_if_dead(key)
        if key not in self._running:
            try:
                self._running[key] = GatewayProcess(scenario=scenario, config=config)
            except NodeNotFoundError as error:
                self._no_node = error
                raise
        return self._running[key]

    def _drop_if_dead(self, key):
        """A process that ended during the session (killed, out of memory) errors the test that finds it,
        with its exit code and last output, once: the next test gets a fresh one."""
        process = self._running.get(key)
        if process is None or process.exit_code() is None:
            return
        del self._running[key]
        process.stop()
        tail = "".join(process.output().splitlines(keepends=True)[-20:])
        raise AgentGatewayError(
            f"the gateway ({process.url}) exited during the session (exit code {process.exit_code()}); "
            f"the next test starts a fresh one. Its last output:\n{tail}"
        )

    def stop_all(self):
        for process in self._running.values():
            process.stop()
        self._running.clear()


def _bypass_proxies_for_loopback():
    """An HTTP(S)_PROXY in the environment would send the agents' loopback requests (requests, httpx, aiohttp
    with trust_env) to the proxy: 127.0.0.1 and localhost are added to NO_PROXY for the session."""
    if not any(os.environ.get(name) for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy")):
        return
    for name in ("NO_PROXY", "no_proxy"):
        present = [h for h in os.environ.get(name, "").split(",") if h.strip()]
        os.environ[name] = ",".join(present + [h for h in ("127.0.0.1", "localhost") if h not in present])


@pytest.fixture(scope="session")
def agent_gateway_processes():
    """The session's gateway processes (one per scenario and config), stopped at the session's end."""
    _bypass_proxies_for_loopback()
    processes = _Processes()
    yield processes
    processes.stop_all()


@pytest.fixture
def agent_gateway(request, agent_gateway_processes):
    """The reference gateway, fresh for this test: `.base_url`, `.token(agent)`, `.api_key(agent)`,
    `.report(agent)`, `.clock`, `.faults`, `.reset()`. Choose what it serves with
    `@pytest.mark.agent_gateway(scenario="burst-429")` or `config=...`.
    """
    marker = request.node.get_closest_marker(MARK)
    options = dict(marker.kwargs) if marker else {}
    unknown = set(options) - {"scenario", "config"}
    if unknown or (marker and marker.args):
        raise pytest.UsageError(
            f"@pytest.mark.{MARK} takes scenario= and config= only; got {sorted(unknown) or list(marker.args)}"
        )
    process = agent_gateway_processes.get(options.get("scenario"), options.get("config"))
    gateway = Gateway(process.url, process.admin_key, process)
    gateway.reset()
    return gateway
