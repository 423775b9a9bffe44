"""The consumer protocol blobs: versions older and newer than ours, empty and hostile input."""

from __future__ import annotations

import pytest

from kafkawire.protocol.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from kafkawire.protocol.primitives import DecodeError

# version 0, topics ["t"], user_data null (as an old Java or librdkafka client writes it)
V0_SUBSCRIPTION = b"\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\xff\xff\xff\xff"


def test_round_trip_keeps_everything() -> None:
    sub = Subscription(["a", "b"], b"ud", {"a": [3, 1]}, 9, "r")
    back = decode_subscription(encode_subscription(sub))
    assert back == Subscription(["a", "b"], b"ud", {"a": [1, 3]}, 9, "r")  # partitions go out sorted
    a = Assignment({"x": [2, 0]}, None)
    assert decode_assignment(encode_assignment(a)) == Assignment({"x": [0, 2]})


def test_version_0_subscription_reads_with_defaults() -> None:
    assert decode_subscription(V0_SUBSCRIPTION) == Subscription(["t"], None, {}, -1, None)


def test_newer_version_is_read_as_ours_and_trailing_fields_ignored() -> None:
    newer = b"\x00\x07" + encode_subscription(Subscription(["t"], generation_id=4))[2:] + b"future fields"
    assert decode_subscription(newer) == Subscription(["t"], generation_id=4)


def test_empty_assignment_bytes_are_an_empty_assignment() -> None:
    assert decode_assignment(b"") == Assignment({})


def test_repeated_topic_entries_are_merged() -> None:
    entry_0 = b"\x00\x01t" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x00"  # "t": [0]
    entry_5 = b"\x00\x01t" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x05"  # "t": [5]
    blob = b"\x00\x00" + b"\x00\x00\x00\x02" + entry_0 + entry_5 + b"\xff\xff\xff\xff"
    assert decode_assignment(blob).partitions == {"t": [0, 5]}


@pytest.mark.parametrize("blob", [b"\x00", b"\xff\xff\x00\x00", b"\x00\x00\x00\x00\x00\x09", V0_SUBSCRIPTION[:-1]])
def test_malformed_blobs_raise_decode_error(blob: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_subscription(blob)
