"""Build hook: make sure the wheel carries the bundled gateway (agent_gateway_harness/_gateway/).

`npm install` (or `npm run build`) in the clone writes it. When it is missing (a git URL install: pip's
temporary clone has no node_modules), the hook installs the clone's locked npm dependencies there
(`npm ci --ignore-scripts`, which needs the npm registry) and builds it with `node dev/python-gateway.mjs`.
Without node or npm, the wheel is built without it, and the plugin then needs AGENT_GATEWAY_CLI
(docs/any-language.md).
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
        npm = shutil.which("npm")
        if os.path.exists(script) and node:
            if not os.path.isdir(esbuild) and npm and os.path.exists(os.path.join(clone, "package-lock.json")):
                sys.stderr.write("agent-gateway-harness: building the gateway bundle (npm ci --ignore-scripts)\n")
                subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=clone, check=True)
            if os.path.isdir(esbuild):
                subprocess.run([node, script], cwd=clone, check=True)
                return
        sys.stderr.write(
            "agent-gateway-harness: no bundled gateway in agent_gateway_harness/_gateway/ "
            "(run `npm install` in the clone first); the wheel is built without it, and the plugin "
            "will need AGENT_GATEWAY_CLI to find the gateway.\n"
        )
