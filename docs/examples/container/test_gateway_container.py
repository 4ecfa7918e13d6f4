"""What a test beside the container does: mint a token, call a tool, read the client report."""

import json
import urllib.request

from conftest_docker_sdk import ADMIN_KEY, agent_gateway_url  # noqa: F401 (the fixture)


def call(url, body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def test_an_agent_graded_through_the_container(agent_gateway_url):
    status, minted = call(f"{agent_gateway_url}/idp/token", {"api_key": "ak_verified_2b8d4f6a1c9e"})
    assert status == 200
    status, _ = call(
        f"{agent_gateway_url}/v1/web/search",
        {"query": "agent tool gateway"},
        {"X-Agent-Identity": minted["token"]},
    )
    assert status == 200
    status, report = call(f"{agent_gateway_url}/__admin/report?agent=agent-verified", headers={"X-Admin-Key": ADMIN_KEY})
    assert status == 200 and report["requests"] > 0 and report["violations"] == []
