"""Finding Node.js (22.13+, 24 or 26+) to run the bundled gateway, with one clear error when it cannot."""

import os
import re
import shutil
import subprocess

from .errors import NodeNotFoundError

# package.json "engines": ^22.13.0 || ^24.0.0 || >=26.0.0 (the maintained lines)
_SUPPORTED = "Node.js 22.13+, 24 or 26+"
_INSTALL = (
    "Install it from https://nodejs.org/ (or your package manager, or `nvm install 24`) and put `node` on "
    "PATH, or set AGENT_GATEWAY_NODE to the node executable."
)


def supported(major, minor):
    """Whether a Node.js version runs the gateway (package.json engines)."""
    return (major == 22 and minor >= 13) or major == 24 or major >= 26


def find_node():
    """The node executable to run the gateway with: $AGENT_GATEWAY_NODE, else `node` on PATH, checked."""
    given = os.environ.get("AGENT_GATEWAY_NODE")
    node = given or shutil.which("node")
    if not node:
        raise NodeNotFoundError(
            f"agent_gateway_harness runs the reference gateway with {_SUPPORTED}, and no `node` is on PATH. "
            + _INSTALL
        )
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60)
        version = out.stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        raise NodeNotFoundError(
            f"agent_gateway_harness runs the reference gateway with {_SUPPORTED}; {node} could not be run "
            f"({error}). " + _INSTALL
        ) from None
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    if not match or not supported(int(match.group(1)), int(match.group(2))):
        raise NodeNotFoundError(
            f"agent_gateway_harness runs the reference gateway with {_SUPPORTED}; {node} is "
            f"{version or 'of an unknown version'}. " + _INSTALL
        )
    return node
