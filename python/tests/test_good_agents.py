"""Good agents pass, on every HTTP client Python agents use; the report they get is the documented JSON."""

import jsonschema
import pytest
from agents import good_httpx_agent, good_httpx_async_agent

from agent_gateway_harness import assert_follows_client_rules, report_schema


@pytest.mark.agent_gateway(scenario="burst-429")
def test_a_good_httpx_agent_passes_even_when_rate_limited(agent_gateway):
    # The clock stands at the start of a rate-limit window, and the agent's waits move it instead of
    # sleeping: Retry-After elapses at once, whatever the machine's speed.
    agent_gateway.clock.set("2030-01-01T00:00:00Z", frozen=True)
    pages = good_httpx_agent(
        agent_gateway.base_url,
        agent_gateway.api_key("agent-early"),
        pages=8,
        sleep=lambda seconds: agent_gateway.clock.advance(seconds=seconds),
    )
    assert len(pages) == 8
    report = assert_follows_client_rules(agent_gateway, "agent-early")
    statuses = [e["status"] for e in agent_gateway.journal("agent-early")]
    assert 429 in statuses, "burst-429 refused the 6th call: the agent met a 429 and still passed"
    assert report["violations"] == []
    jsonschema.validate(report, report_schema())


def test_a_good_async_httpx_agent_passes(agent_gateway):
    assert len(good_httpx_async_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))) == 3
    assert assert_follows_client_rules(agent_gateway, "agent-early")["requests"] == 4


@pytest.mark.agent_gateway(scenario="burst-429")
def test_reports_with_violations_follow_the_json_schema(agent_gateway):
    from agents import gather_storm_aiohttp_agent

    agent_gateway.clock.set("2030-01-01T00:00:00Z", frozen=True)
    gather_storm_aiohttp_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
    report = agent_gateway.report("agent-early")
    assert report["schema_version"] == 1
    assert {v["rule"] for v in report["violations"]} >= {"no-parallel-storm"}
    jsonschema.validate(report, report_schema())
    assert report_schema()["$id"].endswith(f"v{report['schema_version']}")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**report, "schema_version": 2}, report_schema())


def test_the_suite_runs_the_installed_wheel():
    """Under `npm run test:python` the package comes from the wheel installed in a fresh venv, not the tree."""
    import os

    import agent_gateway_harness

    if os.environ.get("AGENT_GATEWAY_EXPECT_INSTALLED") != "1":
        pytest.skip("run by npm run test:python, which installs the wheel")
    assert "site-packages" in agent_gateway_harness.__file__
    assert os.path.isfile(os.path.join(os.path.dirname(agent_gateway_harness.__file__), "_gateway", "cli", "agent-gateway.mjs"))


def _good_requests_agent(base_url, api_key):
    import requests

    with requests.Session() as session:
        token = session.post(f"{base_url}/idp/token", json={"api_key": api_key}, timeout=30).json()["token"]
        headers = {"X-Agent-Identity": token}
        return [session.get(f"{base_url}/v1/whoami", headers=headers, timeout=30).status_code for _ in range(3)]


def _good_aiohttp_agent(base_url, api_key):
    import asyncio

    import aiohttp

    async def run():
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{base_url}/idp/token", json={"api_key": api_key}) as answer:
                token = (await answer.json())["token"]
            statuses = []
            for _ in range(3):
                async with session.get(f"{base_url}/v1/whoami", headers={"X-Agent-Identity": token}) as r:
                    statuses.append(r.status)
            return statuses

    return asyncio.run(run())


@pytest.mark.parametrize("agent", [_good_requests_agent, _good_aiohttp_agent], ids=["requests", "aiohttp"])
def test_well_behaved_agents_on_requests_and_aiohttp_pass(agent_gateway, agent):
    assert agent(agent_gateway.base_url, agent_gateway.api_key("agent-verified")) == [200, 200, 200]
    assert assert_follows_client_rules(agent_gateway, "agent-verified")["requests"] == 4
