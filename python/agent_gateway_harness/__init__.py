"""Test Python agents against the Agent Tool Gateway reference gateway, and grade them against the spec's
client safety rules. The pytest plugin (fixture `agent_gateway`) is registered on install; see
docs/any-language.md in the harness's repository. `Conformance` runs the conformance suite against a gateway
as pytest items, one per check (docs/gateway-implementers.md).
"""

import json
import os

from ._process import GatewayProcess
from .assertions import assert_follows_client_rules
from .conformance import Conformance
from .errors import AdminApiError, AgentGatewayError, NodeNotFoundError
from .gateway import Gateway

REPORT_SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "_gateway", "report.schema.json")


def report_schema():
    """The JSON Schema of the client report (versioned: its $id and the report's schema_version)."""
    with open(REPORT_SCHEMA_PATH, encoding="utf-8") as handle:
        return json.load(handle)


__all__ = [
    "REPORT_SCHEMA_PATH",
    "report_schema",
    "AdminApiError",
    "AgentGatewayError",
    "Conformance",
    "Gateway",
    "GatewayProcess",
    "NodeNotFoundError",
    "assert_follows_client_rules",
]
