"""Choosing the API version for a request from what the broker advertised in ApiVersions."""

from __future__ import annotations

from collections.abc import Mapping

from ..protocol.codec import Struct
from ..protocol.schema import Api

VersionRanges = Mapping[int, tuple[int, int]]


class UnsupportedVersionError(Exception):
    """We and the broker share no version of an API."""


def ranges_from_response(body: Struct) -> dict[int, tuple[int, int]]:
    """The broker's ``ApiVersions`` answer as ``{api_key: (min, max)}``."""
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}


def choose_version(api: Api, broker: VersionRanges, *, max_version: int | None = None) -> int:
    """The highest version both sides speak (optionally capped), or an error naming the API."""
    theirs = broker.get(api.key)
    if theirs is None:
        raise UnsupportedVersionError(f"the broker does not support {api.name} (API key {api.key})")
    high = min(api.max_version, theirs[1], api.max_version if max_version is None else max_version)
    low = max(api.min_version, theirs[0])
    if high < low:
        raise UnsupportedVersionError(
            f"no common version of {api.name}: we speak {api.min_version}-{api.max_version}"
            f"{'' if max_version is None else f' (capped at {max_version})'}, the broker {theirs[0]}-{theirs[1]}"
        )
    return high
