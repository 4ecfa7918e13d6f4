import httpx
import pytest

from agent_gateway_harness import assert_follows_client_rules


def my_agent(base_url, api_key):
    """The agent under test: mints a token with its API key, then fetches a page (no retry)."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        token = client.post("/idp/token", json={"api_key": api_key}).json()["token"]
        page = client.post(
            "/v1/web/fetch",
            json={"url": "https://docs.agent-gateway.example/welcome"},
            headers={"X-Agent-Identity": token},
        )
        page.raise_for_status()
        return page.json()


def test_my_agent_follows_the_client_rules(agent_gateway):
    my_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
    assert_follows_client_rules(agent_gateway, "agent-early")


@pytest.mark.agent_gateway(scenario="burst-429")  # 5 tool calls per 10 s, then 429 with Retry-After
def test_my_agent_under_a_rate_limit(agent_gateway):
    agent_gateway.clock.set("2030-01-01T00:00:00Z", frozen=True)  # the start of a window, frozen
    for _ in range(5):
        my_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
    with pytest.raises(httpx.HTTPStatusError, match="429"):
        my_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
    agent_gateway.clock.advance(seconds=10)  # the window passes at once: no sleeping
    my_agent(agent_gateway.base_url, agent_gateway.api_key("agent-early"))
    assert_follows_client_rules(agent_gateway, "agent-early")
