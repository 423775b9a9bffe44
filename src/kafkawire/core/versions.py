"""Choosing the API version for a request from what the broker advertised in ApiVersions.

An ApiVersions answer is checked before it is trusted (`ranges_from_response` raises
`VersionsError`): a broker that answers ApiVersions speaks ApiVersions and Metadata, and every
range is ``0 <= min <= max``. A version gap is believed only when a second connection's answer
says the same (`Doubts`): one mutated answer must cost a reconnect, never a permanent error.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..protocol.apis import API_VERSIONS, METADATA
from ..protocol.codec import Struct
from ..protocol.schema import Api

VersionRanges = Mapping[int, tuple[int, int]]

# Every broker that answers ApiVersions speaks these: an answer without them is not trusted.
REQUIRED_APIS = (API_VERSIONS, METADATA)


class VersionsError(Exception):
    """An ApiVersions answer that cannot be true: the connection that carried it is not trusted."""


class UnsupportedVersionError(Exception):
    """We and the broker share no version of an API.

    ``confirmed`` is False the first time this broker's answer shows the gap: the caller
    reconnects and asks again before failing the request (see `Doubts`)."""

    def __init__(self, message: str, *, confirmed: bool = True) -> None:
        super().__init__(message)
        self.confirmed = confirmed


def ranges_from_response(body: Struct) -> dict[int, tuple[int, int]]:
    """The broker's ``ApiVersions`` answer as ``{api_key: (min, max)}``, checked for sanity."""
    ranges: dict[int, tuple[int, int]] = {}
    for k in body.api_keys:
        if k.api_key < 0 or k.min_version < 0 or k.max_version < k.min_version:
            raise VersionsError(f"ApiVersions names API {k.api_key} with versions {k.min_version}..{k.max_version}")
        if k.api_key in ranges:
            raise VersionsError(f"ApiVersions names API {k.api_key} twice")
        ranges[k.api_key] = (k.min_version, k.max_version)
    for api in REQUIRED_APIS:
        if api.key not in ranges:
            raise VersionsError(f"ApiVersions does not list {api.name}, which every broker speaks")
    return ranges


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


class Doubts:
    """Version gaps seen once per broker: believed when the next connection's answer agrees.

    Lives as long as the broker's connection object (across reconnects)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[int, int] | None] = {}

    def choose(self, api: Api, broker: VersionRanges, *, max_version: int | None = None) -> int:
        try:
            version = choose_version(api, broker, max_version=max_version)
        except UnsupportedVersionError as exc:
            theirs = broker.get(api.key)
            if api.key in self._seen and self._seen[api.key] == theirs:
                raise
            self._seen[api.key] = theirs
            raise UnsupportedVersionError(str(exc), confirmed=False) from None
        self._seen.pop(api.key, None)
        return version
