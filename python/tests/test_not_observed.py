"""A rule the gateway could not observe is not a pass (docs/agent-developers.md, "Not observed is not a pass").

The report says so in `rules[].unobserved`; today that happens through `agent-gateway proxy` when it does
not know the agent's API key (a token minted at the target, not through the proxy). `Gateway` pointed at such
a proxy must fail `assert_follows_client_rules` as the JS matcher and `agent-gateway report` (exit 2) do.
"""

import os
import re
import subprocess

import httpx
import pytest
from agent_gateway_harness import Gateway, assert_follows_client_rules
from agent_gateway_harness._process import gateway_command
from agents import PAGE


@pytest.fixture
def proxy(agent_gateway):
    """`agent-gateway proxy` in front of the fixture's gateway, on loopback; stopped after the test."""
    env = dict(os.environ, AGENT_GATEWAY_ADMIN_KEY="proxy-admin-key-for-test")
    child = subprocess.Popen(
        gateway_command() + ["proxy", "--target", agent_gateway.base_url, "--port", "0", "--host", "127.0.0.1"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        url = None
        for line in child.stdout:
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        assert url, "the proxy printed no URL"
        gateway = Gateway(url, env["AGENT_GATEWAY_ADMIN_KEY"])
        gateway.mark()
        yield gateway
    finally:
        child.terminate()
        child.wait(30)


# An agent of the target only: the proxy (which knows the bundled default's agents) does not know its key.
TEAM_BOT = {"agents": [{"id": "team-bot", "name": "Team bot", "api_key": "ak_team_5e6f7a8b9c0d", "tier": "early_access"}]}


@pytest.mark.agent_gateway(config=TEAM_BOT)
def test_a_rule_not_observed_fails_the_assertion(agent_gateway, proxy):
    token = agent_gateway.token("team-bot")  # minted at the target: the proxy never sees the API key
    answer = httpx.post(f"{proxy.base_url}/v1/web/fetch", json={"url": PAGE}, headers={"X-Agent-Identity": token})
    assert answer.status_code == 200
    report = proxy.report("team-bot")
    assert report["requests"] >= 1 and not report["violations"]
    assert any(rule.get("unobserved") for rule in report["rules"]), report["rules"]
    with pytest.raises(AssertionError) as failure:
        assert_follows_client_rules(proxy, "team-bot")
    message = str(failure.value)
    assert message.startswith("could not grade team-bot on every client safety rule: not observed, not passed")
    assert "NOT OBSERVED  no-secrets-in-requests" in message
    assert "What team-bot did (1 requests):" in message
