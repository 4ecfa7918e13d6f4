"""Testcontainers for Python: the reference gateway's image as a pytest fixture.

pip install testcontainers pytest requests; the image is built from the harness's Dockerfile and tagged
agent-gateway (or set AGENT_GATEWAY_IMAGE). Same fixture as conftest_docker_sdk.py, which the harness's
own tests run (testcontainers-python is not installable where they run).
"""

import os

import pytest
import requests
from testcontainers.core.container import DockerContainer
from testcontainers.core.waiting_utils import wait_for

ADMIN_KEY = "testcontainers-admin-key"


@pytest.fixture(scope="session")
def agent_gateway_url():
    container = (
        DockerContainer(os.environ.get("AGENT_GATEWAY_IMAGE", "agent-gateway"))
        .with_command("serve")
        .with_env("AGENT_GATEWAY_ADMIN_KEY", ADMIN_KEY)
        .with_exposed_ports(8787)
    )
    with container:
        url = f"http://{container.get_container_host_ip()}:{container.get_exposed_port(8787)}"
        wait_for(lambda: requests.get(f"{url}/v1/health", timeout=2).ok)
        yield url
