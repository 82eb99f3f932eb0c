"""Every request goes through here: the key, the base URL, and retries.

- 429: any request is sent again after Retry-After (the API refused it before doing anything).
- 5xx and network failures: sent again, with growing delays, only when sending twice cannot do
  twice: reads, and a create carrying an Idempotency-Key (the client adds one).
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional

from ._errors import StillsConnectionError, error_from_answer
from ._version import VERSION


class RetryPolicy:
    def __init__(
        self,
        max_retries: int = 3,
        initial_delay: float = 0.5,
        max_delay: float = 8.0,
        max_retry_after: float = 60.0,
    ):
        self.max_retries = max_retries
        self.initial_delay = initial_delay
        self.max_delay = max_delay
        self.max_retry_after = max_retry_after


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects; a redirect must not carry the key elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


class Transport:
    def __init__(
        self,
        api_key: Optional[str],
        base_url: str,
        retry: RetryPolicy,
        timeout: float,
        headers: Optional[Mapping[str, str]] = None,
    ):
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.retry = retry
        self.timeout = timeout
        self.headers = dict(headers or {})

    def url(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        url = self.base_url + path
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        return url + ("?" + urllib.parse.urlencode(params) if params else "")

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Any]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotent: Optional[bool] = None,
    ) -> Any:
        safe = idempotent if idempotent is not None else method == "GET"
        sent_headers: Dict[str, str] = {
            "accept": "application/json",
            "user-agent": f"stills-python/{VERSION}",
            **self.headers,
            **(headers or {}),
        }
        if self.api_key:
            sent_headers["authorization"] = f"Bearer {self.api_key}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            sent_headers["content-type"] = "application/json"
        url = self.url(path, query)
        attempt = 0
        while True:
            retries_left = attempt < self.retry.max_retries
            backoff = min(self.retry.max_delay, self.retry.initial_delay * 2**attempt)
            attempt += 1
            request = urllib.request.Request(url, data=data, headers=sent_headers, method=method)
            try:
                with _OPENER.open(request, timeout=self.timeout) as response:
                    text = response.read().decode()
                    return json.loads(text) if text else None
            except urllib.error.HTTPError as answer:
                text = answer.read().decode(errors="replace")
                answer_headers = {k.lower(): v for k, v in answer.headers.items()}
                error = error_from_answer(answer.code, text, answer_headers)
                if retries_left and answer.code == 429:
                    wait = error.retry_after if error.retry_after is not None else backoff
                    if wait <= self.retry.max_retry_after:
                        time.sleep(wait)
                        continue
                if retries_left and safe and answer.code >= 500:
                    time.sleep(_jitter(backoff))
                    continue
                raise error from None
            except (urllib.error.URLError, OSError) as failure:
                if retries_left and safe:
                    time.sleep(_jitter(backoff))
                    continue
                raise StillsConnectionError(f"{method} {url} got no answer: {failure}") from failure


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _jitter(seconds: float) -> float:
    """75-100 % of the delay, so clients that failed together do not retry together."""
    return seconds * (0.75 + random.random() * 0.25)
