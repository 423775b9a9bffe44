"""The consumer protocol's blobs byte for byte against kafka-python's (an independent implementation)."""

from __future__ import annotations

from typing import Any

import pytest

from kafkawire.protocol.consumer_protocol import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated. Use files\\(\\) instead:DeprecationWarning")


def _kafka_metadata() -> Any:
    return pytest.importorskip("kafka.protocol.consumer.metadata")


SUBSCRIPTIONS = [
    Subscription(["orders"]),
    Subscription(["a", "b"], user_data=b"\x00\x01", owned_partitions={"a": [0, 2], "b": [1]}, generation_id=7),
    Subscription(["t"], rack_id="rack-1", generation_id=3),
]


@pytest.mark.parametrize("sub", SUBSCRIPTIONS)
def test_subscription_bytes_match_kafka_python(sub: Subscription) -> None:
    kp = _kafka_metadata().ConsumerProtocolSubscription
    owned = [kp.TopicPartition(topic=t, partitions=ps) for t, ps in sorted(sub.owned_partitions.items())]
    theirs = kp(
        topics=sub.topics,
        user_data=sub.user_data,
        owned_partitions=owned,
        generation_id=sub.generation_id,
        rack_id=sub.rack_id,
    )
    assert encode_subscription(sub) == theirs.encode(version=3)
    assert decode_subscription(theirs.encode(version=3)) == sub


def test_assignment_bytes_match_kafka_python() -> None:
    kp = _kafka_metadata().ConsumerProtocolAssignment
    ours = Assignment({"a": [0, 1], "b": [4]}, user_data=b"x")
    theirs = kp(
        assigned_partitions=[
            kp.TopicPartition(topic="a", partitions=[0, 1]),
            kp.TopicPartition(topic="b", partitions=[4]),
        ],
        user_data=b"x",
    )
    assert encode_assignment(ours) == theirs.encode(version=3)
    assert decode_assignment(theirs.encode(version=0)) == ours
