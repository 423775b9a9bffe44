"""The principal of a token STS minted: its JWT's ``sub`` claim, read without checking the signature
(STS signed it; the broker checks it)."""

from __future__ import annotations

import base64
import binascii
import json

__all__ = ["extract_sub"]

_MAX_TOKEN_LENGTH_CHARS = 8192


def extract_sub(jwt: str) -> str:
    """``sub`` of the JWT's payload; ValueError naming what is wrong with the token otherwise."""
    if jwt is None:
        raise ValueError("JWT is null.")
    if jwt == "":
        raise ValueError("JWT is empty.")
    if len(jwt) > _MAX_TOKEN_LENGTH_CHARS:
        raise ValueError(f"JWT length {len(jwt)} exceeds maximum allowed ({_MAX_TOKEN_LENGTH_CHARS}).")
    segments = jwt.split(".")
    if len(segments) != 3:
        raise ValueError(f"JWT must have exactly 3 '.'-separated segments; got {len(segments)}.")
    try:
        text = _base64url(segments[1]).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"JWT payload is not valid UTF-8: {exc}") from exc
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"JWT payload is not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise ValueError("JWT payload is not a JSON object.")
    sub = payload.get("sub")
    if not isinstance(sub, str):
        raise ValueError("JWT payload is missing a 'sub' string claim.")
    if sub == "":
        raise ValueError("JWT 'sub' claim value is empty.")
    return sub


def _base64url(segment: str) -> bytes:
    """A JWT segment's bytes: base64url without padding (a length of 1 mod 4 cannot be one)."""
    if segment == "":
        raise ValueError("JWT payload segment is empty.")
    if len(segment) % 4 == 1:
        raise ValueError("JWT payload segment has invalid base64url length.")
    padded = segment.replace("-", "+").replace("_", "/") + "=" * (-len(segment) % 4)
    try:
        return base64.b64decode(padded.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise ValueError(f"JWT payload segment is not valid base64url: {exc}") from exc
