"""Build hook: make sure the wheel carries the bundled gateway (agent_gateway_harness/_gateway/).

`npm install` (or `npm run build`) in the clone writes it. When it is missing and the clone's
node_modules is there, the hook builds it with `node dev/python-gateway.mjs`. Without either, the wheel
is built without it and the plugin then needs AGENT_GATEWAY_CLI (see docs/any-language.md).
"""

import os
import shutil
import subprocess
import sys

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUNDLE = os.path.join("agent_gateway_harness", "_gateway", "cli", "agent-gateway.mjs")


class GatewayBundleHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if os.path.exists(os.path.join(self.root, BUNDLE)):
            return
        clone = os.path.dirname(os.path.abspath(self.root))
        script = os.path.join(clone, "dev", "python-gateway.mjs")
        esbuild = os.path.join(clone, "node_modules", "esbuild")
        node = shutil.which("node")
        if os.path.exists(script) and os.path.isdir(esbuild) and node:
            subprocess.run([node, script], cwd=clone, check=True)
            return
        sys.stderr.write(
            "agent-gateway-harness: no bundled gateway in agent_gateway_harness/_gateway/ "
            "(run `npm install` in the clone first); the wheel is built without it, and the plugin "
            "will need AGENT_GATEWAY_CLI to find the gateway.\n"
        )
