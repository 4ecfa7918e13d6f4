"""A running reference gateway, driven over HTTP: tokens, API keys, the report, the clock, faults, reset."""

import json
import os
import urllib.error
import urllib.parse
import urllib.request

from .errors import AdminApiError

# Admin calls are local and small; the bound only keeps a stuck gateway from hanging a test forever.
_TIMEOUT_S = 60
# The gateway is on loopback: never through an HTTP(S)_PROXY of the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _query_name(threshold):
    """retryCap or retry_cap -> retry_cap (the report's query parameters)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in threshold)


class Gateway:
    """The reference gateway a test talks to: `base_url`, and its admin API as Python methods.

    Each test starts from a fresh state (`reset()`, done by the `agent_gateway` fixture): agents, limits,
    faults, the clock and the journal as the gateway started, and a mark so that `report()` and
    `assert_follows_client_rules` grade only the requests made since.
    """

    def __init__(self, base_url, admin_key, process=None):
        self.base_url = base_url.rstrip("/")
        self.admin_key = admin_key
        self.process = process
        self.since = 0
        # request ids of the calls the harness itself made as an agent (token()): not the agent's doing
        self.own_request_ids = set()
        self.clock = Clock(self)
        self.faults = Faults(self)

    # -- HTTP ---------------------------------------------------------------------------------------------
    def call(self, method, path, body=None, admin=True):
        """One call to the gateway; returns the JSON answer, raises AdminApiError on an error status."""
        return self._exchange(method, path, body, admin)[0]

    def _exchange(self, method, path, body=None, admin=True):
        """One call to the gateway: (the JSON answer, the response headers); AdminApiError on an error status."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if admin:
            headers["x-admin-key"] = self.admin_key
        request = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with _DIRECT.open(request, timeout=_TIMEOUT_S) as response:
                text = response.read().decode()
                answer_headers = response.headers
        except urllib.error.HTTPError as error:
            text = error.read().decode(errors="replace")
            try:
                answer = json.loads(text)
            except ValueError:
                answer = {"message": text}
            raise AdminApiError(method, path, error.code, answer.get("code"), answer.get("message")) from None
        return (json.loads(text) if text else None), answer_headers

    # -- identity -----------------------------------------------------------------------------------------
    def api_key(self, agent):
        """The API key of an agent of the gateway (the fixture agents': agent-early, agent-verified, ...)."""
        return self.call("GET", f"/__admin/agents/{urllib.parse.quote(agent, safe='')}")["api_key"]

    def token(self, agent):
        """A fresh identity token for the agent, minted with its API key (POST /idp/token).

        The gateway journals the mint under the agent; it is remembered as the harness's own, so a test in which
        only the harness minted a token does not count as the agent having made a request."""
        answer, headers = self._exchange("POST", "/idp/token", {"api_key": self.api_key(agent)}, admin=False)
        if headers.get("x-request-id"):
            self.own_request_ids.add(headers["x-request-id"])
        return answer["token"]

    def agents(self):
        """The agents of the gateway, with their tiers and API keys."""
        return self.call("GET", "/__admin/agents")["agents"]

    # -- state --------------------------------------------------------------------------------------------
    def reset(self):
        """Back to the gateway's start (its scenario, if any; the real clock), and a new mark for grading."""
        self.call("POST", "/__admin/clock/reset")
        self.call("POST", "/__admin/reset")
        self.mark()

    def mark(self):
        """From now on, report() and assert_follows_client_rules grade only the requests made after this."""
        self.since = self.call("GET", "/__admin/journal?limit=1")["next_since"]
        self.own_request_ids.clear()
        return self.since

    def use_scenario(self, name=None, scenario=None):
        """Loads a bundled scenario by name, or one given as a dict (resets the state first)."""
        return self.call("POST", "/__admin/scenario", {"name": name} if name else {"scenario": scenario})

    def journal(self, agent=None):
        """The requests the gateway saw since the mark (oldest first), as the admin API lists them."""
        entries, since = [], self.since
        while True:
            query = {"since": since, **({"agent": agent} if agent else {})}
            page = self.call("GET", "/__admin/journal?" + urllib.parse.urlencode(query))
            entries += page["entries"]
            if not page.get("more"):
                return entries
            since = page["next_since"]

    # -- the client report --------------------------------------------------------------------------------
    def report(self, agent, since=None, **thresholds):
        """The client report (JSON, docs/any-language.md) of the agent's requests since the mark.

        Thresholds as keyword arguments: retry_cap, grace_ms, max_concurrency_after_429, quiet_ms.
        """
        query = {"agent": agent, "since": self.since if since is None else since}
        query.update({_query_name(k): v for k, v in thresholds.items() if v is not None})
        return self.call("GET", "/__admin/report?" + urllib.parse.urlencode(query))

    def report_text(self, agent, since=None, **thresholds):
        """The report as `agent-gateway report` prints it (what the JS matchers show), since the mark."""
        return self.report(agent, since, **thresholds)["text"]


class Clock:
    """The gateway's virtual clock (POST /__admin/clock/...): move time instead of sleeping."""

    def __init__(self, gateway):
        self._gateway = gateway

    def now(self):
        """The clock's state: now (epoch ms), time (ISO 8601), frozen."""
        return self._gateway.call("GET", "/__admin/clock")

    def freeze(self):
        return self._gateway.call("POST", "/__admin/clock/freeze")

    def resume(self):
        return self._gateway.call("POST", "/__admin/clock/resume")

    def reset(self):
        """Back to real time."""
        return self._gateway.call("POST", "/__admin/clock/reset")

    def advance(self, seconds=None, ms=None):
        """Moves the clock forward: rate-limit windows, Retry-After and token lifetimes pass at once."""
        body = {"ms": int(ms)} if ms is not None else {"seconds": seconds}
        return self._gateway.call("POST", "/__admin/clock/advance", body)

    def set(self, time, frozen=None):
        """Sets the clock to an ISO 8601 time or epoch ms; frozen=True stops it there."""
        body = {"time": time, **({} if frozen is None else {"frozen": frozen})}
        return self._gateway.call("POST", "/__admin/clock/set", body)


class Faults:
    """Injected faults (POST /__admin/faults): 5xx answers, delays and dropped connections."""

    def __init__(self, gateway):
        self._gateway = gateway

    def arm(self, kind, operation=None, agent=None, **spec):
        """Arms a fault, e.g. arm("status", operation="web.search", status=503, count=2, retry_after=1)."""
        match = {k: v for k, v in {"operation": operation, "agent": agent}.items() if v is not None}
        return self._gateway.call("POST", "/__admin/faults", {"kind": kind, "match": match, **spec})

    def list(self):
        return self._gateway.call("GET", "/__admin/faults")["faults"]

    def clear(self):
        return self._gateway.call("DELETE", "/__admin/faults")["faults"]

    def disarm(self, fault_id):
        return self._gateway.call("DELETE", f"/__admin/faults/{urllib.parse.quote(fault_id, safe='')}")
