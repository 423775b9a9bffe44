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


# What librdkafka says when a broker speaks no version of an API a call needs (its request builders'
# texts, by Kafka's API name), so that the `_UNSUPPORTED_FEATURE` a program or its log sees reads as
# on confluent-kafka. An API not listed here keeps kafkawire's own text, which names its key.
LACKED: dict[str, str] = {
    "CreateTopics": "Topic Admin API (KIP-4) not supported by broker, requires broker version >= 0.10.2.0",
    "DeleteTopics": "Topic Admin API (KIP-4) not supported by broker, requires broker version >= 0.10.2.0",
    "DeleteRecords": "DeleteRecords Admin API (KIP-107) not supported by broker, requires broker version >= 0.11.0",
    "CreatePartitions": "CreatePartitions (KIP-195) not supported by broker, requires broker version >= 1.0.0",
    "AlterConfigs": "AlterConfigs (KIP-133) not supported by broker, requires broker version >= 0.11.0",
    "IncrementalAlterConfigs": (
        "IncrementalAlterConfigs (KIP-339) not supported by broker, requires broker version >= 2.3.0"
    ),
    "DescribeConfigs": "DescribeConfigs (KIP-133) not supported by broker, requires broker version >= 0.11.0",
    "DeleteGroups": "DeleteGroups Admin API (KIP-229) not supported by broker, requires broker version >= 1.1.0",
    "CreateAcls": "ACLs Admin API (KIP-140) not supported by broker, requires broker version >= 0.11.0.0",
    "DescribeAcls": "ACLs Admin API (KIP-140) not supported by broker, requires broker version >= 0.11.0.0",
    "DeleteAcls": "ACLs Admin API (KIP-140) not supported by broker, requires broker version >= 0.11.0.0",
    "ElectLeaders": "ElectLeaders Admin API (KIP-460) not supported by broker, requires broker version >= 2.4.0",
    "DescribeUserScramCredentials": "DescribeUserScramCredentials API (KIP-554) not supported by broker",
    "AlterUserScramCredentials": "AlterUserScramCredentials API (KIP-554) not supported by broker",
    "ConsumerGroupDescribe": "ConsumerGroupDescribe (KIP-848) not supported by broker, requires broker version >= 4.0.0",
    "ListGroups": "ListGroupsRequest not supported by broker",
    "DescribeGroups": "DescribeGroupsRequest not supported by broker",
    "ConsumerGroupHeartbeat": "ConsumerGroupHeartbeatRequest not supported by broker",
    "ShareGroupHeartbeat": "ShareGroupHeartbeatRequest not supported by broker",
}


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
    """The highest version both sides speak (optionally capped), or an error naming the API: in
    librdkafka's words when it has some (`LACKED`, for a missing API and a gap alike, as its check is
    one), else in ours."""
    theirs = broker.get(api.key)
    if theirs is None:
        raise UnsupportedVersionError(
            LACKED.get(api.name) or f"the broker does not support {api.name} (API key {api.key})"
        )
    high = min(api.max_version, theirs[1], api.max_version if max_version is None else max_version)
    low = max(api.min_version, theirs[0])
    if high < low:
        raise UnsupportedVersionError(
            LACKED.get(api.name)
            or f"no common version of {api.name}: we speak {api.min_version}-{api.max_version}"
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
