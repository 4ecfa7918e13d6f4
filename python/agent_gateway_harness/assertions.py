"""assert_follows_client_rules: grades an agent's requests of the current test against the client rules."""

from .errors import AdminApiError


def _by_the_agent(gateway, entries):
    """The entries the agent under test sent: not the tokens the harness minted for it (gateway.token)."""
    return [e for e in entries if e.get("request_id") not in gateway.own_request_ids]


def _nothing_seen(gateway, agent):
    others = {}
    for entry in _by_the_agent(gateway, gateway.journal()):
        if entry.get("agent"):
            others[entry["agent"]] = others.get(entry["agent"], 0) + 1
    seen = ", ".join(f"{a} ({n})" for a, n in others.items())
    return "\n".join(
        [
            f"no request from {agent} was seen in this test.",
            f"The gateway saw requests from: {seen}. Is {agent} the agent whose API key or token the agent "
            "under test used?"
            if seen
            else f"The gateway saw no request at all in this test: did the agent run, and did it use the "
            f"gateway's base_url ({gateway.base_url})?",
        ]
    )


def assert_follows_client_rules(gateway, agent, **thresholds):
    """Fails unless the agent followed every client safety rule in the requests made during this test.

    Raises AssertionError when the agent made no request in this test, when a rule could not be observed
    (the report's rules[].unobserved: not observed is not a pass), and otherwise, on a violation, with
    the report (rule id, spec section, what was expected and what was seen, the offending requests) and the
    agent's timeline. Returns the report (JSON, docs/any-language.md) when the agent passed.
    Thresholds as keyword arguments: retry_cap, grace_ms, max_concurrency_after_429, quiet_ms.
    """
    __tracebackhide__ = True
    try:
        report = gateway.report(agent, **thresholds)
    except AdminApiError as error:
        if error.code == "not_found":
            raise AssertionError(f"no request from {agent} was seen in this test: {error}") from None
        raise
    if report["requests"] == 0:
        raise AssertionError(_nothing_seen(gateway, agent))
    # Green means seen: a rule the gateway could not observe (rules[].unobserved) is not a pass either.
    unobserved = [rule["id"] for rule in report["rules"] if rule.get("unobserved")]
    failed = bool(report["violations"] or unobserved)
    # The agent's entries are read only when the harness's own mints must be told apart from its requests.
    if gateway.own_request_ids and not _by_the_agent(gateway, gateway.journal(agent)):
        raise AssertionError(_nothing_seen(gateway, agent))
    if failed:
        heading = (
            f"expected {agent} to follow the client safety rules"
            if report["violations"]
            else f"could not grade {agent} on every client safety rule: not observed, not passed: "
            + ", ".join(unobserved)
        )
        # The report's text and the agent's timeline as the gateway renders them: what the JS matchers show.
        raise AssertionError(f"{heading}\n\n{report['text']}\n\n{report['timeline']}")
    return report
