"""Without Node.js 22.13+, 24 or 26+ the plugin says once, clearly, what to install."""

import json
import os
import re
import stat
import textwrap
from pathlib import Path

import pytest

from agent_gateway_harness import GatewayProcess, NodeNotFoundError
from agent_gateway_harness._node import supported


@pytest.fixture
def no_overrides(monkeypatch):
    monkeypatch.delenv("AGENT_GATEWAY_CLI", raising=False)
    monkeypatch.delenv("AGENT_GATEWAY_NODE", raising=False)


def test_no_node_on_path(monkeypatch, tmp_path, no_overrides):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NodeNotFoundError, match=r"Node\.js 22\.13\+, 24 or 26\+, and no `node` is on PATH"):
        GatewayProcess()


def test_an_old_node(monkeypatch, tmp_path, no_overrides):
    fake = tmp_path / "node"
    fake.write_text("#!/bin/sh\necho v18.19.0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("AGENT_GATEWAY_NODE", str(fake))
    with pytest.raises(NodeNotFoundError, match=r"is v18\.19\.0\. Install it from https://nodejs\.org/"):
        GatewayProcess()


def test_the_fixture_reports_it_as_one_error(pytester, monkeypatch, tmp_path, no_overrides):
    monkeypatch.setenv("PATH", str(tmp_path))
    pytester.makepyfile(
        textwrap.dedent(
            """
            def test_agent(agent_gateway):
                pass
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*NodeNotFoundError: agent_gateway_harness runs the reference gateway with Node.js*"])
    assert os.environ["PATH"] == str(tmp_path)


def test_many_tests_without_node_show_one_traceback(pytester, monkeypatch, tmp_path, no_overrides):
    """Every test that asks for the fixture errors, but Node.js is looked for once: the first error has the
    traceback, the others only the message (not one 40-line traceback per test of a large suite)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest

            def test_one(agent_gateway):
                pass

            def test_two(agent_gateway):
                pass

            @pytest.mark.agent_gateway(scenario="burst-429")
            def test_three(agent_gateway):
                pass

            def test_without_the_gateway():
                pass
            """
        )
    )
    # No short summary (-rN): under CI=true pytest prints its lines whole, and they would repeat each message.
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rN")
    result.assert_outcomes(errors=3, passed=1)
    text = result.stdout.str()
    assert text.count("raise NodeNotFoundError(") == 1
    assert text.count("NodeNotFoundError: agent_gateway_harness runs the reference gateway with Node.js") == 3


def _engines_admit(engines, major, minor):
    """package.json's engines range (alternatives of ^X.Y.Z and >=X.Y.Z) for a version X.Y."""
    for alternative in engines.split("||"):
        op, version = re.match(r"^\s*(\^|>=)(\d+\.\d+)\.\d+\s*$", alternative).groups()
        low = tuple(int(part) for part in version.split("."))
        if (major, minor) >= low and (op == ">=" or major == low[0]):
            return True
    return False


@pytest.mark.parametrize(
    "version",
    ["20.19", "20.20", "21.7", "22.12", "22.13", "22.22", "23.11", "24.0", "24.22", "25.9", "26.0", "27.1"],
)
def test_the_check_agrees_with_package_json_engines(version):
    engines = json.loads((Path(__file__).parents[2] / "package.json").read_text())["engines"]["node"]
    major, minor = (int(part) for part in version.split("."))
    assert supported(major, minor) == _engines_admit(engines, major, minor), (version, engines)
