"""The fixture's control of the gateway: scenarios, config, faults, the clock, tokens, reset."""

import httpx
import pytest
from agent_gateway_harness import assert_follows_client_rules
from agents import PAGE


def fetch(gateway, token):
    return httpx.post(
        f"{gateway.base_url}/v1/web/fetch", json={"url": PAGE}, headers={"X-Agent-Identity": token}, timeout=30
    )


def test_tokens_are_minted_with_the_fixture_agents_api_keys(agent_gateway):
    keys = {a["id"]: a["api_key"] for a in agent_gateway.agents()}
    assert agent_gateway.api_key("agent-early") == keys["agent-early"]
    token = agent_gateway.token("agent-verified")
    whoami = httpx.get(f"{agent_gateway.base_url}/v1/whoami", headers={"X-Agent-Identity": token}, timeout=30)
    assert whoami.status_code == 200
    assert "agent-verified" in whoami.text


@pytest.mark.agent_gateway(scenario="burst-429")
def test_a_scenario_refuses_the_sixth_call_until_the_clock_moves_past_retry_after(agent_gateway):
    token = agent_gateway.token("agent-early")
    agent_gateway.clock.freeze()
    statuses = [fetch(agent_gateway, token).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    refused = fetch(agent_gateway, token)
    assert refused.status_code == 429
    agent_gateway.clock.advance(seconds=int(refused.headers["retry-after"]))
    assert fetch(agent_gateway, token).status_code == 200


@pytest.mark.agent_gateway(config={"rate_limits": {"rules": [
    {"name": "one", "scope": "agent", "algorithm": "fixed_window", "limit": 1, "window_seconds": 60}
]}})
def test_a_config_dict_is_laid_over_the_default(agent_gateway):
    token = agent_gateway.token("agent-early")
    agent_gateway.clock.freeze()
    assert [fetch(agent_gateway, token).status_code for _ in range(2)] == [200, 429]


def test_faults_strike_as_armed(agent_gateway):
    token = agent_gateway.token("agent-early")
    agent_gateway.faults.arm("status", operation="web.fetch", status=503, count=1, retry_after=1)
    first = fetch(agent_gateway, token)
    assert (first.status_code, first.headers.get("retry-after")) == (503, "1")
    assert fetch(agent_gateway, token).status_code == 200
    assert agent_gateway.faults.list() == []


@pytest.mark.agent_gateway(scenario="flaky-5xx")
def test_the_flaky_scenario_answers_503_first(agent_gateway):
    token = agent_gateway.token("agent-early")
    assert fetch(agent_gateway, token).status_code == 503


def test_reset_gives_a_fresh_state(agent_gateway):
    token = agent_gateway.token("agent-early")
    agent_gateway.faults.arm("delay", operation="web.fetch", delay_ms=0)
    agent_gateway.clock.freeze()
    fetch(agent_gateway, token)
    assert agent_gateway.report("agent-early")["requests"] == 2
    agent_gateway.reset()
    assert agent_gateway.faults.list() == []
    assert agent_gateway.clock.now()["frozen"] is False
    assert agent_gateway.report("agent-early")["requests"] == 0


def test_a_proxy_in_the_environment_is_bypassed_for_the_gateway(pytester, monkeypatch):
    # A proxy that does not exist: any request sent through it would fail.
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    pytester.makepyfile(
        """
        import requests
        from agent_gateway_harness import assert_follows_client_rules

        def test_agent(agent_gateway):
            token = agent_gateway.token("agent-verified")
            whoami = requests.get(f"{agent_gateway.base_url}/v1/whoami", headers={"X-Agent-Identity": token})
            assert whoami.status_code == 200
            assert_follows_client_rules(agent_gateway, "agent-verified")
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_token_minted_by_the_test_is_not_a_request_of_the_agent(agent_gateway):
    """The test mints a token with the fixture and the agent never runs: nothing of the agent was seen, so
    the assertion fails (the harness's own POST /idp/token is journaled under the agent, but is not graded
    as the agent having done something)."""
    agent_gateway.token("agent-early")
    with pytest.raises(AssertionError, match="no request from agent-early was seen in this test"):
        assert_follows_client_rules(agent_gateway, "agent-early")


def test_a_token_minted_by_the_test_and_used_by_the_agent_is_graded(agent_gateway):
    token = agent_gateway.token("agent-early")
    assert fetch(agent_gateway, token).status_code == 200
    report = assert_follows_client_rules(agent_gateway, "agent-early")
    assert report["requests"] >= 1
