"""The reference gateway's image as a pytest fixture, with the Docker SDK for Python (`pip install docker`).

The image is built from the harness's Dockerfile and tagged agent-gateway (or set AGENT_GATEWAY_IMAGE);
DOCKER_HOST may name any Docker-compatible socket (podman's: `podman system service`). Run by
test/container-recipes.test.ts with test_gateway_container.py.
"""

import json
import os
import time
import urllib.request

import docker
import pytest

ADMIN_KEY = "docker-sdk-admin-key"


def _get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, json.loads(response.read() or b"null")


@pytest.fixture(scope="session")
def agent_gateway_url():
    client = docker.from_env()
    container = client.containers.run(
        os.environ.get("AGENT_GATEWAY_IMAGE", "agent-gateway"),
        command=["serve"],
        environment={"AGENT_GATEWAY_ADMIN_KEY": ADMIN_KEY},
        ports={"8787/tcp": ("127.0.0.1", None)},  # a free port on the host's loopback
        detach=True,
        remove=True,
    )
    try:
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["8787/tcp"][0]["HostPort"]
        url = f"http://127.0.0.1:{port}"
        for _ in range(120):  # until it answers, at most about two minutes
            try:
                if _get(f"{url}/v1/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            raise RuntimeError(f"the gateway never answered: {container.logs().decode()}")
        yield url
    finally:
        container.stop(timeout=5)
