"""The errors the plugin raises besides AssertionError."""


class AgentGatewayError(RuntimeError):
    """The gateway could not be started, or answered an admin call with an error."""


class NodeNotFoundError(AgentGatewayError):
    """Node.js is missing or too old to run the reference gateway."""


class AdminApiError(AgentGatewayError):
    """The gateway refused an admin or identity-provider call: status, error code and message."""

    def __init__(self, method, path, status, code, message):
        super().__init__(f"{method} {path} answered {status} {code or ''}: {message}".replace("  ", " "))
        self.status = status
        self.code = code
