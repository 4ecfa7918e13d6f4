"""A gateway process that died during the session (killed, out of memory) is said so, once, and replaced."""

import textwrap


def test_a_dead_gateway_is_named_and_replaced(pytester):
    pytester.makepyfile(
        textwrap.dedent(
            """
            import os
            import signal

            def test_kills_it(agent_gateway):
                os.killpg(agent_gateway.process._child.pid, signal.SIGKILL)
                agent_gateway.process._child.wait(30)

            def test_finds_it_dead(agent_gateway):
                pass

            def test_gets_a_fresh_one(agent_gateway):
                assert agent_gateway.agents()
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["*AgentGatewayError: the gateway (http://127.0.0.1:*) exited during the session (exit code -9)*"]
    )
