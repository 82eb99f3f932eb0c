"""What a call can raise. An answer from the API is a StillsError (a subclass per status)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional

from ._types import ErrorData, Problem


class StillsError(Exception):
    """The API answered with an error: the spec's error body, its status and headers."""

    status: int
    data: ErrorData
    body: Dict[str, Any]
    headers: Mapping[str, str]
    retry_after: Optional[float]

    def __init__(self, status: int, body: Dict[str, Any], headers: Mapping[str, str]):
        super().__init__(body.get("message", f"HTTP {status}"))
        self.status = status
        self.body = body
        self.data = body["data"]
        self.headers = headers
        value = headers.get("retry-after")
        try:
            self.retry_after = float(value) if value is not None else None
        except ValueError:
            self.retry_after = None

    @property
    def name(self) -> str:
        """The API error type (data.name): InvalidRequest, InsufficientBalance, ..."""
        return self.data["name"]

    @property
    def user_message(self) -> str:
        return self.data["userMessage"]

    @property
    def request_id(self) -> Optional[str]:
        return self.data.get("request_id") or self.headers.get("x-request-id")

    @property
    def errors(self) -> List[Problem]:
        return self.data.get("errors", [])

    @property
    def doc_url(self) -> Optional[str]:
        return self.data.get("doc_url")

    def __str__(self) -> str:
        return f"{self.name} (HTTP {self.status}): {self.args[0]}"


class InvalidRequestError(StillsError):
    """400: the request is invalid, or beyond the plan's limits."""


class AuthenticationError(StillsError):
    """401: no key, or a key the API does not know."""


class InsufficientBalanceError(StillsError):
    """402: not enough credits."""


class NotFoundError(StillsError):
    """404: no such job (or route)."""


class RateLimitError(StillsError):
    """429: too many requests (after the client's retries)."""


class ServerError(StillsError):
    """5xx: the service could not answer."""


_BY_STATUS = {
    400: InvalidRequestError,
    401: AuthenticationError,
    402: InsufficientBalanceError,
    404: NotFoundError,
    429: RateLimitError,
}

_NAME_FOR_STATUS = {
    401: "AuthenticationRequired",
    402: "InsufficientBalance",
    404: "NotFound",
    405: "MethodNotAllowed",
    429: "RateLimited",
}


def error_from_answer(status: int, text: str, headers: Mapping[str, str]) -> StillsError:
    """The error for an answer, whatever its body holds (a proxy's HTML page, say)."""
    try:
        body = json.loads(text) if text else None
    except ValueError:
        body = None
    if not (isinstance(body, dict) and isinstance(body.get("data"), dict) and "name" in body["data"]):
        message = f"HTTP {status}" + (f": {text[:200]}" if text else "")
        body = {
            "name": "Error",
            "message": message,
            "code": status,
            "className": "error",
            "data": {
                "name": _NAME_FOR_STATUS.get(
                    status, "ServiceUnavailable" if status >= 500 else "InvalidRequest"
                ),
                "userMessage": "Something went wrong on our side. Please try again.",
                "errors": [{"param": None, "message": message}],
                "request_id": headers.get("x-request-id"),
                "doc_url": "https://api.stills.dev/docs/errors",
            },
        }
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else StillsError)
    return cls(status, body, headers)


class StillsConnectionError(Exception):
    """No answer came (network failure or time-out), after every retry."""


class StillsTimeoutError(Exception):
    """wait_for's timeout passed before the job (or batch) ended; `job` is the last state seen."""

    def __init__(self, message: str, job: Any):
        super().__init__(message)
        self.job = job


class WebhookVerificationError(Exception):
    """A webhook delivery that must not be trusted: bad signature, old timestamp, missing header."""
