"""Standard Webhooks verification (https://www.standardwebhooks.com/)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union, cast

from ._errors import WebhookVerificationError
from ._types import WebhookEvent


def _header(headers: Any, name: str) -> Optional[str]:
    # A dict (any case), an email.message.Message, a requests/werkzeug/starlette headers object.
    getter = getattr(headers, "get", None)
    value = getter(name) if getter else None
    if value is None and isinstance(headers, Mapping):
        for key, candidate in headers.items():
            if key.lower() == name:
                value = candidate
                break
    if isinstance(value, (list, tuple)):
        value = " ".join(value)
    return value


def sign(payload: Union[str, bytes], msg_id: str, timestamp: int, secret: str) -> str:
    """The webhook-signature a sender computes (useful to test a receiver)."""
    body = payload.encode() if isinstance(payload, str) else payload
    try:
        key = base64.b64decode(secret[len("whsec_") :] if secret.startswith("whsec_") else secret)
    except binascii.Error as error:
        raise WebhookVerificationError("the secret is not a whsec_ secret") from error
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


class Webhooks:
    def verify(
        self,
        payload: Union[str, bytes],
        headers: Any,
        secret: str,
        *,
        tolerance: int = 300,
        now: Optional[float] = None,
    ) -> WebhookEvent:
        """Checks a delivery and returns its event. `payload` is the raw body as received.

        Raises WebhookVerificationError when a header is missing, the timestamp is further than
        `tolerance` seconds from now, or no signature matches.
        """
        msg_id = _header(headers, "webhook-id")
        timestamp = _header(headers, "webhook-timestamp")
        signatures = _header(headers, "webhook-signature")
        if not msg_id or not timestamp or not signatures:
            raise WebhookVerificationError(
                "missing webhook-id, webhook-timestamp or webhook-signature"
            )
        current = time.time() if now is None else now
        if not timestamp.isdigit() or abs(current - int(timestamp)) > tolerance:
            raise WebhookVerificationError(
                f"webhook-timestamp {timestamp} is more than {tolerance} s from now; refusing a replay"
            )
        expected = sign(payload, msg_id, int(timestamp), secret)
        if not any(hmac.compare_digest(candidate, expected) for candidate in signatures.split()):
            raise WebhookVerificationError("no webhook-signature matches the payload")
        try:
            return cast(WebhookEvent, json.loads(payload))
        except ValueError as error:
            raise WebhookVerificationError("the signed payload is not JSON") from error
