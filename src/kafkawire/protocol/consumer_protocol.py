"""The consumer protocol: what consumers put inside JoinGroup's metadata and SyncGroup's assignment.

Classic groups treat these as opaque bytes; consumers of every client (Java, librdkafka, us) agree
on this format so that they can share a group. Each blob is an int16 version followed by the
struct at that version (never flexible):

    Subscription => version:int16 topics:[string] user_data:nullable_bytes
                    owned_partitions:[topic:string partitions:[int32]]   (v1+, cooperative)
                    generation_id:int32                                  (v2+)
                    rack_id:nullable_string                              (v3+)
    Assignment   => version:int16 assigned_partitions:[topic:string partitions:[int32]]
                    user_data:nullable_bytes

Declared as data and run by the one codec, like the APIs (tests/conformance compares them with
Kafka's ConsumerProtocolSubscription/Assignment specs). A blob from a newer client is read at our
newest version: later versions only append fields, and the bytes after ours are ignored, as Java does.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from . import codec
from .primitives import DecodeError
from .schema import NONE, MessageSchema, Versions, array, f

PROTOCOL_TYPE = "consumer"  # JoinGroup's protocol_type for consumer groups
VERSION = 3  # the newest version of both formats; what we write

SUBSCRIPTION = MessageSchema(
    "ConsumerProtocolSubscription",
    Versions(0, VERSION),
    NONE,
    (
        f("topics", array("string")),
        f("user_data", "bytes", nullable="0+", default=None),
        f("owned_partitions", array(
            f("topic", "string", "1+"),
            f("partitions", array("int32"), "1+"),
        ), "1+", ignorable=True),
        f("generation_id", "int32", "2+", default=-1, ignorable=True),
        f("rack_id", "string", "3+", nullable="3+", default=None, ignorable=True),
    ),
)  # fmt: skip

ASSIGNMENT = MessageSchema(
    "ConsumerProtocolAssignment",
    Versions(0, VERSION),
    NONE,
    (
        f("assigned_partitions", array(
            f("topic", "string"),
            f("partitions", array("int32")),
        )),
        f("user_data", "bytes", nullable="0+", default=None),
    ),
)  # fmt: skip

TopicPartitions = dict[str, list[int]]  # topic -> partitions, the shape assignors work with

_VERSION = struct.Struct(">h")


@dataclass(frozen=True)
class Subscription:
    """One member's JoinGroup metadata: what it wants and (cooperative) what it owns now."""

    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = field(default_factory=dict)
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True)
class Assignment:
    """One member's share of the partitions, as the leader decided it."""

    partitions: TopicPartitions
    user_data: bytes | None = None


def encode_subscription(sub: Subscription) -> bytes:
    return _VERSION.pack(VERSION) + codec.encode(
        SUBSCRIPTION,
        VERSION,
        {
            "topics": sub.topics,
            "user_data": sub.user_data,
            "owned_partitions": _to_wire(sub.owned_partitions),
            "generation_id": sub.generation_id,
            "rack_id": sub.rack_id,
        },
    )


def decode_subscription(data: bytes) -> Subscription:
    body = _decode(SUBSCRIPTION, data)
    return Subscription(
        topics=list(body.topics),
        user_data=body.user_data,
        owned_partitions=_from_wire(body.owned_partitions),
        generation_id=body.generation_id,
        rack_id=body.rack_id,
    )


def encode_assignment(assignment: Assignment) -> bytes:
    body = {"assigned_partitions": _to_wire(assignment.partitions), "user_data": assignment.user_data}
    return _VERSION.pack(VERSION) + codec.encode(ASSIGNMENT, VERSION, body)


def decode_assignment(data: bytes) -> Assignment:
    """Empty bytes are an empty assignment (a leader may send nothing to a member it gave nothing)."""
    if not data:
        return Assignment({})
    body = _decode(ASSIGNMENT, data)
    return Assignment(_from_wire(body.assigned_partitions), body.user_data)


def _decode(schema: MessageSchema, data: bytes) -> codec.Struct:
    if len(data) < 2:
        raise DecodeError(f"{schema.name}: {len(data)} bytes, no version")
    (version,) = _VERSION.unpack_from(data)
    if version < 0:
        raise DecodeError(f"{schema.name}: negative version {version}")
    body, _end = codec.decode_from(schema, min(version, VERSION), data, 2)
    return body


def _to_wire(tps: TopicPartitions) -> list[dict[str, object]]:
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(tps.items())]


def _from_wire(entries: list[codec.Struct]) -> TopicPartitions:
    out: TopicPartitions = {}
    for entry in entries:
        out.setdefault(entry.topic, []).extend(entry.partitions)
    return out
