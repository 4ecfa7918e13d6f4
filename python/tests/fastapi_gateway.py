"""A gateway implemented with FastAPI, as a gateway implementer would write one: the proof that the
conformance suite runs as pytest items against a Python gateway (test_conformance_items.py).

It follows the spec: health without a token; whoami and the two tools behind `X-Agent-Identity` (signed
tokens that expire or are revoked, 401 missing_identity_token / invalid_identity_token); tiers (early_access: web.fetch;
verified: both tools, 403 access_denied otherwise); JSON errors with a code; a fixed-window rate limit per
token on the tools (429 rate_limited with a truthful Retry-After). `create_app(fault=...)` breaks one rule:
`"missing-token-code"` answers a request without the header with invalid_identity_token.
"""

import base64
import hashlib
import hmac
import json
import math
import secrets
import socket
import threading
import time

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

TIERS = {"early_access": {"web.fetch"}, "verified": {"web.search", "web.fetch"}}
AGENTS = {"agent-early": "early_access", "agent-verified": "verified"}
FAULTS = (None, "missing-token-code")


def error(status, code, message, headers=None):
    return JSONResponse({"code": code, "message": message}, status_code=status, headers=headers)


class Tokens:
    """Signed tokens `payload.signature` carrying the agent and an expiry: any change to one is refused."""

    def __init__(self, secret=None, clock=time.time, revoked=()):
        self._secret = secret or secrets.token_bytes(32)
        self._clock = clock
        self.revoked = set(revoked)

    def _sign(self, payload):
        return hmac.new(self._secret, payload.encode("ascii"), hashlib.sha256).hexdigest()

    def mint(self, agent, ttl_seconds=3600):
        body = json.dumps({"agent": agent, "exp": self._clock() + ttl_seconds}, separators=(",", ":"))
        payload = base64.urlsafe_b64encode(body.encode()).decode("ascii").rstrip("=")
        return f"{payload}.{self._sign(payload)}"

    def verify(self, token):
        """The agent of a valid, unexpired token; else None."""
        # Header values may carry any byte (latin-1 here): compare_digest takes ASCII text only.
        if not token.isascii() or token in self.revoked:
            return None
        payload, dot, signature = token.partition(".")
        if not dot or not hmac.compare_digest(self._sign(payload), signature):
            return None
        try:
            claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except ValueError:
            return None
        if claims.get("agent") not in AGENTS or claims.get("exp", 0) <= self._clock():
            return None
        return claims["agent"]


class FixedWindow:
    """`limit` tool calls per token in each window of `seconds`; Retry-After is the rest of the window."""

    def __init__(self, clock, limit=30, seconds=2):
        self._clock, self.limit, self.seconds = clock, limit, seconds
        self._windows = {}

    def admit(self, key):
        """None when admitted, else the seconds until the window ends (at least 1)."""
        now = self._clock()
        start = now - now % self.seconds
        window, used = self._windows.get(key, (start, 0))
        if window != start:
            window, used = start, 0
        if used >= self.limit:
            return max(1, math.ceil(window + self.seconds - now))
        self._windows[key] = (window, used + 1)
        return None


def create_app(fault=None, secret=None, clock=time.time, revoked=()):
    """The gateway's app; tokens signed with `secret` (random when None), so a test can mint them first;
    `revoked`: tokens its identity provider revoked before their expiry."""
    if fault not in FAULTS:
        raise ValueError(f"fault must be one of {FAULTS}")
    app = FastAPI(title="FastAPI agent tool gateway")
    app.state.tokens = Tokens(secret, clock, revoked)
    limiter = FixedWindow(clock)

    @app.exception_handler(HTTPException)
    async def http_error(request, exc):
        codes = {404: "not_found", 405: "method_not_allowed"}
        return error(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(request, exc):
        return error(400, "invalid_request", "the request is not valid")

    def identify(request):
        token = request.headers.get("x-agent-identity")
        if token is None:
            if fault == "missing-token-code":
                return None, error(401, "invalid_identity_token", "token not accepted")
            return None, error(401, "missing_identity_token", "send a token in X-Agent-Identity")
        agent = app.state.tokens.verify(token)
        if agent is None:
            return None, error(401, "invalid_identity_token", "token not accepted: obtain a fresh one")
        return agent, None

    @app.get("/v1/health")
    async def health():
        return {"status": "ok"}

    @app.get("/v1/whoami")
    async def whoami(request: Request):
        agent, refusal = identify(request)
        if refusal:
            return refusal
        return {"agent_id": agent, "tier": AGENTS[agent]}

    async def tool(request, name, field):
        agent, refusal = identify(request)
        if refusal:
            return refusal
        if name not in TIERS[AGENTS[agent]]:
            return error(403, "access_denied", f"{name} needs the verified tier: request verification")
        try:
            body = json.loads(await request.body())
        except ValueError:
            return error(400, "invalid_json", "the body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get(field), str) or not body[field]:
            return error(400, "invalid_request", f"the body needs a non-empty string {field}")
        wait = limiter.admit(agent)
        if wait is not None:
            return error(429, "rate_limited", "too many calls: back off", {"Retry-After": str(wait)})
        if name == "web.search":
            return {"query": body[field], "results": [{"title": "FastAPI", "url": "https://fastapi.example/"}]}
        return {"url": body[field], "status": 200, "content": "Example page"}

    @app.post("/v1/web/search")
    async def search(request: Request):
        return await tool(request, "web.search", "query")

    @app.post("/v1/web/fetch")
    async def fetch(request: Request):
        return await tool(request, "web.fetch", "url")

    return app


class ServedGateway:
    """The app served by uvicorn on a free loopback port, in a thread: `.url`, `.token(agent)`, `.stop()`."""

    def __init__(self, fault=None, secret=None, revoked=()):
        self.app = create_app(fault, secret, revoked=revoked)
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self._socket.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        # Started is uvicorn's own flag, set once it accepts connections; bounded by the thread's end.
        while not self._server.started and self._thread.is_alive():
            time.sleep(0.05)

    def token(self, agent, ttl_seconds=3600):
        return self.app.state.tokens.mint(agent, ttl_seconds)

    def stop(self):
        self._server.should_exit = True
        self._thread.join(30)
        self._socket.close()
