"""The plugin grades real Python agents: good ones pass, each bad one fails naming the rule it broke.

The failing tests run inside pytester (their own pytest session, their own gateway process), so this suite
asserts that they FAIL, and with which message.
"""

import textwrap

AGENT_TESTS = textwrap.dedent(
    """
    import pytest
    from agents import gather_storm_aiohttp_agent, impatient_requests_agent, leaky_search_agent
    from agent_gateway_harness import assert_follows_client_rules

    # The clock stands at the start of a rate-limit window: the 429 asks for the whole window (10 s).
    START = "2030-01-01T00:00:00Z"

    @pytest.mark.agent_gateway(scenario="burst-429")
    def test_ignores_retry_after(agent_gateway):
        agent_gateway.clock.set(START, frozen=True)
        impatient_requests_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
        assert_follows_client_rules(agent_gateway, "agent-early")

    @pytest.mark.agent_gateway(scenario="burst-429")
    def test_gather_storm(agent_gateway):
        agent_gateway.clock.set(START, frozen=True)
        gather_storm_aiohttp_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
        assert_follows_client_rules(agent_gateway, "agent-early")

    def test_token_in_query(agent_gateway):
        leaky_search_agent(agent_gateway.base_url, agent_gateway.api_key("agent-verified"))
        assert_follows_client_rules(agent_gateway, "agent-verified")

    def test_no_requests(agent_gateway):
        assert_follows_client_rules(agent_gateway, "agent-verified")
    """
)


def run_inner(pytester, source):
    """Runs `source` as a test file in its own pytest session; the call-phase report of each test by name."""
    pytester.makepyfile(test_inner=source)
    recorder = pytester.inline_run("-p", "no:cacheprovider")
    reports = [r for r in recorder.getreports("pytest_runtest_logreport") if r.when == "call" or r.failed]
    return {r.nodeid.split("::")[-1]: r for r in reports}


def failure_of(reports, name):
    report = reports[name]
    assert report.failed, f"{name} was expected to fail, but it {report.outcome}"
    return report.longreprtext


def test_bad_agents_fail_naming_the_rule_they_broke(pytester):
    reports = run_inner(pytester, AGENT_TESTS)

    retry_after = failure_of(reports, "test_ignores_retry_after")
    assert "AssertionError: expected agent-early to follow the client safety rules" in retry_after
    assert "FAIL  honor-retry-after           §7 (429: honor Retry-After), §8" in retry_after
    assert "which asked for" in retry_after  # expected vs seen
    assert "What agent-early did (" in retry_after  # the timeline
    assert "PASS  no-secrets-in-requests" in retry_after

    storm = failure_of(reports, "test_gather_storm")
    assert "FAIL  no-parallel-storm           §7 (429: reduce concurrency)" in storm
    assert "in flight at once" in storm

    leak = failure_of(reports, "test_token_in_query")
    assert "FAIL  no-secrets-in-requests      §1 rule 2" in leak
    assert "FAIL  honor-retry-after" not in leak

    nothing = failure_of(reports, "test_no_requests")
    assert "AssertionError: no request from agent-verified was seen in this test" in nothing


def test_each_test_grades_only_its_own_requests_on_a_shared_process(pytester):
    reports = run_inner(
        pytester,
        textwrap.dedent(
            """
            import pytest
            from agents import good_httpx_async_agent, impatient_requests_agent
            from agent_gateway_harness import assert_follows_client_rules

            processes = []

            @pytest.mark.agent_gateway(scenario="burst-429")
            def test_bad_first(agent_gateway):
                processes.append(agent_gateway.process)
                agent_gateway.clock.set("2030-01-01T00:00:00Z", frozen=True)
                impatient_requests_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
                assert_follows_client_rules(agent_gateway, "agent-early")

            @pytest.mark.agent_gateway(scenario="burst-429")
            def test_good_after_on_the_same_process(agent_gateway):
                processes.append(agent_gateway.process)
                good_httpx_async_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
                report = assert_follows_client_rules(agent_gateway, "agent-early")
                assert report["requests"] == 4  # its token and 3 pages, nothing of the test before
                assert processes[0] is processes[1]

            @pytest.mark.agent_gateway(scenario="burst-429")
            def test_silent_after_a_busy_one(agent_gateway):
                with pytest.raises(AssertionError, match="no request from agent-early was seen in this test"):
                    assert_follows_client_rules(agent_gateway, "agent-early")
            """
        ),
    )
    assert "FAIL  honor-retry-after" in failure_of(reports, "test_bad_first")
    assert reports["test_good_after_on_the_same_process"].passed, reports[
        "test_good_after_on_the_same_process"
    ].longreprtext
    assert reports["test_silent_after_a_busy_one"].passed


def test_what_a_call_sends_is_read_whatever_its_body_and_whoever_answers(pytester):
    """A form-encoded body refused 415, a deflate-compressed body (aiohttp) and a health probe carrying the
    agent's own key: each leak is found, and belongs to the agent whose key it is."""
    reports = run_inner(
        pytester,
        textwrap.dedent(
            """
            from agents import deflate_key_aiohttp_agent, form_key_requests_agent, health_key_agent
            from agent_gateway_harness import assert_follows_client_rules

            def test_form_key(agent_gateway):
                form_key_requests_agent(agent_gateway.base_url, agent_gateway.api_key("agent-verified"))
                assert_follows_client_rules(agent_gateway, "agent-verified")

            def test_deflate_key(agent_gateway):
                deflate_key_aiohttp_agent(agent_gateway.base_url, agent_gateway.api_key("agent-verified"))
                assert_follows_client_rules(agent_gateway, "agent-verified")

            def test_health_key(agent_gateway):
                health_key_agent(agent_gateway.base_url, agent_gateway.api_key("agent-verified"))
                assert_follows_client_rules(agent_gateway, "agent-verified")
            """
        ),
    )
    for name, place in [
        ("test_form_key", "its body.api_key"),
        ("test_deflate_key", "its query"),
        ("test_health_key", "the call’s own URL"),
    ]:
        failure = failure_of(reports, name)
        assert "FAIL  no-secrets-in-requests      §1 rule 2" in failure, failure
        assert place in failure, failure
        assert "own_api_key" in failure, failure
