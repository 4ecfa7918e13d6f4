# syntax=docker/dockerfile:1
# The reference gateway, its identity provider, the proxy and the conformance suite as one image; the entry
# point is the `agent-gateway` CLI:
#   docker run -p 127.0.0.1:8787:8787 IMAGE serve
#   docker run -p 127.0.0.1:8788:8788 IMAGE proxy --target https://staging.example.com
#   docker run IMAGE check --base-url https://staging.example.com --token "$TOKEN"
# docs/any-language.md#the-container-image says how to give it config, scenarios and recordings.
#
# BASE is any Debian-like image: the official Node 24 slim image by default. A base without node (a plain
# Debian) gets Node.js from the npm registry's node-linux-<arch> package in the build stage.
ARG BASE=node:24-bookworm-slim

FROM ${BASE} AS build
ARG NODE_VERSION=24.22.3
ARG NPM_VERSION=11.19.1
# Behind a TLS-intercepting proxy, give its CA bundle as the secret `ca` (`--secret id=ca,src=ca.pem`): the
# downloads below trust it too. /out/node stays empty when the base has node: the final stage then copies
# nothing over the base's own.
RUN --mount=type=secret,id=ca set -eu; mkdir -p /out/node; \
    if [ -f /run/secrets/ca ]; then export CURL_CA_BUNDLE=/run/secrets/ca; fi; \
    if ! command -v node >/dev/null 2>&1; then \
      apt-get update; \
      apt-get install -y --no-install-recommends ca-certificates curl; \
      case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "no Node.js package for $(uname -m)" >&2; exit 1 ;; esac; \
      mkdir -p /tmp/node /opt/npm /out/node/bin; \
      curl -fsSL "https://registry.npmjs.org/node-linux-${arch}/-/node-linux-${arch}-${NODE_VERSION}.tgz" | tar -xz -C /tmp/node; \
      cp /tmp/node/package/bin/node /out/node/bin/node; \
      curl -fsSL "https://registry.npmjs.org/npm/-/npm-${NPM_VERSION}.tgz" | tar -xz -C /opt/npm --strip-components=1; \
      ln -s /out/node/bin/node /usr/local/bin/node; \
      ln -s /opt/npm/bin/npm-cli.js /usr/local/bin/npm; \
      rm -rf /tmp/node /var/lib/apt/lists/*; \
    fi; \
    node --version; npm --version
WORKDIR /src
COPY package.json package-lock.json ./
# The locked dependencies, without install scripts (the bundle needs none of them); npm's cache is kept
# between builds where the builder supports cache mounts.
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=ca set -eu; \
    if [ -f /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi; \
    npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The CLI as one file with every dependency inside, its fixtures and dashboard assets (the same bundle the
# Python package ships): the final stage needs no node_modules.
RUN node dev/python-gateway.mjs /out/app

FROM ${BASE}
COPY --from=build /out/node/ /usr/local/
COPY --from=build /out/app/ /opt/agent-gateway/
# The official image has the user `node` (uid 1000); a plain Debian gets one.
RUN set -eu; id -u node >/dev/null 2>&1 || useradd --uid 1000 --user-group --create-home --shell /usr/sbin/nologin node; \
    mkdir -p /data && chown node:node /data
# Inside the container loopback cannot be reached from outside: serve and proxy listen on every interface.
ENV AGENT_GATEWAY_HOST=0.0.0.0 \
    NODE_ENV=production
# Config, scenarios and recordings: mount them here (docker run -v "$PWD/gateway:/data:ro" ...) and name them
# relative to it (serve --config gateway.yaml --scenario my-scenario.yaml).
WORKDIR /data
USER node
# serve's port. (proxy listens on 8788: publish it with -p. Exposing it too would make podman's Docker API list
# it unbound in PortBindings, and Testcontainers then waits for it forever.)
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AGENT_GATEWAY_HEALTH_PORT||8787)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "/opt/agent-gateway/cli/agent-gateway.mjs"]
CMD ["serve"]
