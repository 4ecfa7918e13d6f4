"""The conformance suite as pytest items: one item per check, run by the `agent-gateway check` CLI.

In a test module::

    from agent_gateway_harness.conformance import Conformance

    test_my_gateway = Conformance(
        "http://127.0.0.1:8000",
        token_command="./mint-token verified",
        denied_token_command="./mint-token early",
    )

pytest then collects `test_my_gateway::health.without-token`, `test_my_gateway::auth.missing-token`, ...,
each marked `must` or `should` (and `conformance`). The first item that runs runs `agent-gateway check`
once, with `--only` the items selected (`-k`, `-m`), and every item reports its check's verdict: pass,
fail (the check's message and reproduction), skipped or not observed (a failure when it keeps the CLI from
passing, a skip with the reason otherwise), or as an expected-results file says (xfail, or a failure when stale). The options are the CLI's own, passed through as they are, so any
option of `check` works here the day the CLI has it.
"""

import json
import os
import shlex
import subprocess
import tempfile

import pytest

from ._process import gateway_command
from .errors import AgentGatewayError

LEVEL_MARKS = {"MUST": "must", "SHOULD": "should"}


def cli_arguments(options):
    """Keyword options as `check` flags: `token_command="x"` is `--token-command x`, True a bare flag, a list
    or tuple a repeated flag (`tool=["web.search", "web.extract=/v1/web/extract"]`), None or False nothing."""
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        values = value if isinstance(value, (list, tuple)) else [value]
        for one in values:
            if one is None or one is False:
                continue
            args.append(flag) if one is True else args.extend([flag, str(one)])
    return args


def flag_value(args, flag):
    """The last value given to `flag` in a CLI argument list (`--flag V` or `--flag=V`), else None."""
    found = None
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            found = args[index + 1]
        elif arg.startswith(flag + "="):
            found = arg[len(flag) + 1 :]
    return found


_CHECK_LISTS = {}


def list_checks(command):
    """The suite's checks as `check --list` prints them: [(id, level)], once per CLI command."""
    key = tuple(command)
    if key not in _CHECK_LISTS:
        try:
            run = subprocess.run(
                command + ["check", "--list"], capture_output=True, text=True, encoding="utf-8", timeout=120
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise AgentGatewayError(f"could not list the checks ({shlex.join(command)} check --list): {error}")
        if run.returncode != 0:
            raise AgentGatewayError(f"{shlex.join(command)} check --list exited {run.returncode}: {run.stderr}")
        checks = []
        for line in run.stdout.splitlines():
            fields = line.split()
            if len(fields) >= 2 and fields[1] in LEVEL_MARKS:
                checks.append((fields[0], fields[1]))
        _CHECK_LISTS[key] = checks
    return _CHECK_LISTS[key]


class Conformance:
    """The conformance suite against one gateway, collected as one pytest item per check.

    base_url: the gateway's URL; or None to take `--conformance-base-url` (ini `agent_gateway_conformance_base_url`).
    base_url_fixture: instead, the name of a fixture that gives the URL (it may start the gateway).
    args: `check` arguments as they are (`["--strict", "--tool=web.search"]`); options: the same as keywords
    (`strict=True`, `token_command="..."`). `--conformance-option` values and the ini option
    `agent_gateway_conformance_args` are added to every run.
    """

    def __init__(self, base_url=None, *, base_url_fixture=None, args=(), **options):
        if base_url is not None and base_url_fixture is not None:
            raise ValueError("give base_url or base_url_fixture, not both")
        self.base_url = base_url
        self.base_url_fixture = base_url_fixture
        self.args = list(args) + cli_arguments(options)
        self.report = None
        self.output = None
        self._outcome = None

    def arguments(self, config):
        """This suite's `check` arguments with the session's (ini first, then the command line's options)."""
        return list(config.getini("agent_gateway_conformance_args")) + list(
            config.getoption("agent_gateway_conformance_options") or []
        ) + self.args

    def resolve_base_url(self, request):
        if self.base_url_fixture:
            return str(request.getfixturevalue(self.base_url_fixture))
        given = self.base_url or request.config.getoption("agent_gateway_conformance_base_url") or (
            request.config.getini("agent_gateway_conformance_base_url")
        )
        if not given:
            raise pytest.UsageError(
                "Conformance needs the gateway's URL: Conformance(base_url), base_url_fixture=, "
                "or pytest --conformance-base-url URL"
            )
        return given

    def outcome(self, request, collector):
        """The run's result, from the first item that asks: the report (dict) or the CLI's error (str)."""
        if self._outcome is None:
            selected = [item.name for item in request.session.items if item.parent is collector]
            self._outcome = self._run(request, selected)
            # The CLI's console output, under the item that ran it (shown with -rA or when it fails).
            request.node.add_report_section("call", "agent-gateway check", self.output or "")
        return self._outcome

    def _run(self, request, selected):
        args = self.arguments(request.config)
        report_path = flag_value(args, "--report-json")
        temporary = None
        if report_path is None:
            handle = tempfile.NamedTemporaryFile(prefix="agent-gateway-check-", suffix=".json", delete=False)
            handle.close()
            temporary = report_path = handle.name
            args = args + ["--report-json", report_path]
        command = gateway_command() + ["check", "--base-url", self.resolve_base_url(request)] + args
        command += ["--only", ",".join(selected)]
        try:
            os.unlink(report_path)
        except OSError:
            pass
        try:
            run = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", errors="replace")
        except OSError as error:
            return f"could not run {shlex.join(command)}: {error}"
        self.output = run.stdout + run.stderr
        try:
            with open(report_path, encoding="utf-8") as handle:
                self.report = json.load(handle)
        except (OSError, ValueError):
            # No report: the CLI could not run the suite (a usage error, no token, unreachable gateway).
            return f"agent-gateway check exited {run.returncode} without a report: {run.stderr.strip() or run.stdout.strip()}"
        finally:
            if temporary:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
        if self.report["summary"]["executed"] == 0:
            return f"no check could run (agent-gateway check exited {run.returncode}): {run.stderr.strip()}"
        return self.report


def failure_text(check):
    """A failed check as pytest shows it: what the rule says, the message, and how to reproduce it."""
    lines = [
        f"{check['id']} ({check['level']}, spec {check['spec_ref']}): {check['title']}",
        check["message"],
    ]
    reproduction = check.get("reproduction") or {}
    for label, key in (
        ("counterexample", "counterexample"),
        ("reproduce with curl", "curl"),
        ("reproduce the burst", "script"),
        ("replay", "replay"),
    ):
        if reproduction.get(key):
            lines.append(f"{label}:\n  {reproduction[key]}")
    if reproduction.get("seed") is not None:
        lines.append(f"seed {reproduction['seed']}" + (f", path {reproduction['path']}" if reproduction.get("path") else ""))
    return "\n".join(lines)


def judge(check, expected=None):
    """One check's verdict as a pytest outcome, as the CLI judges it. `expected`: the verdict an
    expected-results file (--expected-results) lists for the check, if any."""
    verdict = check["verdict"]
    if expected is not None:
        if expected != verdict:
            pytest.fail(
                f"{check['id']}: the expected-results file lists {expected}, the check gave {verdict} "
                f"(a stale expectation: update the file): {check['message']}",
                pytrace=False,
            )
        if verdict == "fail":
            pytest.xfail(f"expected to fail (expected-results file): {check['message']}")
        pytest.skip(f"expected {verdict} (expected-results file): {check['message']}")
    if verdict == "pass":
        return
    if verdict == "fail":
        pytest.fail(failure_text(check), pytrace=False)
    # Skipped or inconclusive: the check did not observe its rule. Never a pass ("green means seen").
    why = check["message"] if verdict == "skipped" else f"not observed ({check.get('unobserved')}): {check['message']}"
    if check.get("remedy"):
        why += f"\nremedy: {check['remedy']}"
    if check.get("blocking"):
        pytest.fail(f"{why}\nor accept it with --allow-unobserved {check['id']}", pytrace=False)
    pytest.skip(why.replace("\n", "; "))


class ConformanceItems(pytest.Collector):
    """The items of one Conformance object: one per check of `check --list` (narrowed by its --only)."""

    def __init__(self, *, suite, **kwargs):
        super().__init__(**kwargs)
        self.suite = suite

    def collect(self):
        checks = list_checks(gateway_command())
        only = flag_value(self.suite.arguments(self.config), "--only")
        if only:
            wanted = {name.strip() for name in only.split(",")}
            checks = [(check_id, level) for check_id, level in checks if check_id in wanted]
        for check_id, level in checks:
            item = pytest.Function.from_parent(self, name=check_id, callobj=_item_function(self, check_id))
            item.add_marker(LEVEL_MARKS[level])
            item.add_marker("conformance")
            yield item


def _item_function(collector, check_id):
    def run_check(request):
        outcome = collector.suite.outcome(request, collector)
        if isinstance(outcome, str):
            pytest.fail(outcome, pytrace=False)
        check = next((c for c in outcome["checks"] if c["id"] == check_id), None)
        if check is None:
            pytest.fail(f"the CLI's report has no verdict for {check_id}", pytrace=False)
        judge(check, (outcome.get("expected_results") or {}).get(check_id))

    run_check.__name__ = check_id
    return run_check
