"""The conformance suite as pytest items (agent_gateway_harness.conformance), proved on a FastAPI gateway
(fastapi_gateway.py): one item per check, named by its id and marked must/should; the deliberate fault fails
its check's item, with the check's message and reproduction; `-k`, `-m`, `--junitxml` and the report's JSON
work; the options are the CLI's own."""

import json
import xml.etree.ElementTree as ElementTree

import pytest

from agent_gateway_harness.conformance import cli_arguments, flag_value, judge

# The inner session's test module: the gateway started by a fixture, its tokens minted with its secret first.
SUITE = """
import pytest
from agent_gateway_harness.conformance import Conformance
from fastapi_gateway import ServedGateway, Tokens

SECRET = b"conformance-items-test-secret"
tokens = Tokens(SECRET)
REVOKED = tokens.mint("agent-verified")


@pytest.fixture(scope="session")
def fastapi_gateway_url():
    served = ServedGateway(fault={fault!r}, secret=SECRET, revoked=[REVOKED])
    yield served.url
    served.stop()


test_fastapi_gateway = Conformance(
    base_url_fixture="fastapi_gateway_url",
    token=tokens.mint("agent-verified"),
    denied_token=tokens.mint("agent-early"),
    expired_token=tokens.mint("agent-verified", ttl_seconds=-60),
    revoked_token=REVOKED,
    tier="verified",
    denied_tier="early_access",
    num_runs=3,
    seed=7,  # one commit, one result: the cases generated are the same every run
)
"""


def outcomes(result):
    """{item name: outcome} from the inner session's reports."""
    return {
        report.nodeid.rsplit("::", 1)[-1]: report.outcome
        for report in result.reprec.getreports("pytest_runtest_logreport")
        if report.when == "call" or report.outcome != "passed"
    }


def test_the_faulty_gateway_fails_exactly_the_check_it_breaks(pytester):
    pytester.makepyfile(test_gateway=SUITE.format(fault="missing-token-code"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
    seen = outcomes(result)
    assert "health.without-token" in seen and "auth.missing-token" in seen
    failed = sorted(name for name, outcome in seen.items() if outcome == "failed")
    assert failed == ["auth.missing-token"], result.stdout.str()
    text = result.stdout.str()
    # The check's message (expected vs seen), its spec section, and a curl reproduction.
    assert "auth.missing-token (MUST, spec §5 rule 3, §7)" in text
    assert "missing_identity_token" in text and "invalid_identity_token" in text
    assert "reproduce with curl:" in text and "curl " in text
    # Every other check passed (none was left unobserved on this gateway, which pages its limits truthfully).
    assert all(outcome == "passed" for name, outcome in seen.items() if name != "auth.missing-token"), seen


def test_selection_junit_xml_and_the_report_json(pytester):
    pytester.makepyfile(test_gateway=SUITE.format(fault=None))
    report = pytester.path / "conformance.json"
    result = pytester.runpytest_inprocess(
        "-p",
        "no:cacheprovider",
        "-k",
        "missing-token or health",
        "-m",
        "must",
        "--junitxml=junit.xml",
        f"--conformance-option=--report-json={report}",
    )
    seen = outcomes(result)
    # health.ignores-bad-token is SHOULD: -m must leaves it out; -k leaves out the checks not named.
    assert seen == {
        "health.without-token": "passed",
        "health.with-valid-token": "passed",
        "auth.missing-token": "passed",
    }, result.stdout.str()
    cases = ElementTree.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    assert sorted(case.get("name") for case in cases) == sorted(seen)
    # The CLI ran only the selected checks (--only), and its JSON report is where the option said.
    checks = json.loads(report.read_text())["checks"]
    assert sorted(check["id"] for check in checks) == sorted(seen)


def test_a_cli_error_fails_every_item_in_one_line(pytester):
    pytester.makepyfile(
        test_gateway="""
from agent_gateway_harness.conformance import Conformance
test_gateway = Conformance("http://127.0.0.1:9", token="t", num_runs=0)
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-k", "health.without-token")
    result.assert_outcomes(failed=1)
    assert "without a report" in result.stdout.str() and "num-runs" in result.stdout.str()


def test_keyword_options_become_the_cli_flags():
    assert cli_arguments({"token_command": "mint v", "strict": True, "seed": None, "tool": ["a", "b=/b"]}) == [
        "--token-command",
        "mint v",
        "--strict",
        "--tool",
        "a",
        "--tool",
        "b=/b",
    ]
    assert flag_value(["--only", "a", "--only=b,c"], "--only") == "b,c"


CHECK = {"id": "ratelimit.burst-429", "level": "MUST", "spec_ref": "§8, §7", "title": "a burst meets 429"}


def test_not_observed_is_never_a_pass():
    blocking = dict(CHECK, verdict="inconclusive", unobserved="rate-limit-budget", message="no 429", blocking=True)
    with pytest.raises(pytest.fail.Exception, match="--allow-unobserved ratelimit.burst-429"):
        judge(dict(blocking, remedy="raise --rate-limit-budget"))
    with pytest.raises(pytest.skip.Exception, match="not observed"):
        judge(dict(blocking, blocking=False, level="SHOULD"))
    with pytest.raises(pytest.skip.Exception, match="no denied token"):
        judge(dict(CHECK, verdict="skipped", message="no denied token"))
    # A MUST check skipped for want of an input keeps the CLI from passing: so it fails its item.
    with pytest.raises(pytest.fail.Exception, match="give --denied-token"):
        judge(dict(CHECK, verdict="skipped", message="no denied token", remedy="give --denied-token", blocking=True))


def test_an_expected_results_file_is_followed():
    failing = dict(CHECK, verdict="fail", message="retry.sequential differs")
    with pytest.raises(pytest.xfail.Exception, match="expected to fail"):
        judge(failing, expected="fail")
    with pytest.raises(pytest.fail.Exception, match="stale expectation"):
        judge(dict(failing, verdict="pass"), expected="fail")
