"""core/metadata.py: what a Metadata answer leaves in the client's picture of the cluster."""

from __future__ import annotations

import re
from typing import Any

from kafkawire.core.kafka_error import KafkaError
from kafkawire.core.metadata import ClusterView
from kafkawire.protocol import codec
from kafkawire.protocol.apis import METADATA


def answer(topics: list[tuple[str, int, int]]) -> Any:
    """A decoded Metadata v1 answer naming ``(topic, error code, partition count)``."""
    body = {
        "brokers": [{"node_id": 1, "host": "b1", "port": 9092, "rack": None}],
        "controller_id": 1,
        "topics": [
            {
                "error_code": code,
                "name": name,
                "is_internal": False,
                "partitions": [
                    {"error_code": 0, "partition_index": p, "leader_id": 1, "replica_nodes": [1], "isr_nodes": [1]}
                    for p in range(count)
                ],
            }
            for name, code, count in topics
        ],
    }
    return codec.decode(METADATA.response, 1, codec.encode(METADATA.response, 1, body))


def test_partition_counts_hold_only_topics_a_record_can_go_to() -> None:
    md = ClusterView()
    md.update(
        answer(
            [
                ("ok", 0, 3),
                ("creating", KafkaError.LEADER_NOT_AVAILABLE, 0),
                ("bad", KafkaError.TOPIC_AUTHORIZATION_FAILED, 2),
            ]
        ),
        1.0,
    )
    assert md.partition_counts == {"ok": 3}
    md.update(answer([("creating", 0, 2)]), 2.0)  # a partial answer keeps the topics it does not name
    assert md.partition_counts == {"ok": 3, "creating": 2}
    md.update(answer([("ok", 0, 5)]), 3.0, full=True)  # a full answer drops the rest
    assert md.partition_counts == {"ok": 5}


def test_blacklisted_topics_are_kept_apart_as_if_they_did_not_exist() -> None:
    md = ClusterView(blacklist=(re.compile("^tmp-"), re.compile("secret")))
    md.update(answer([("tmp-a", 0, 1), ("orders", 0, 2), ("my-secret-x", 0, 1)]), 1.0)
    assert set(md.topics) == {"orders"} and md.partition_counts == {"orders": 2}
    assert set(md.ignored) == {"tmp-a", "my-secret-x"}  # (matched anywhere in the name, as librdkafka)
    assert md.ignores("tmp-b") and not md.ignores("orders-tmp-")
    md.update(answer([("orders", 0, 2)]), 2.0, full=True)
    assert md.ignored == {}


def test_a_not_leader_answer_forgets_the_leader_only_from_the_broker_named_leader() -> None:
    md = ClusterView()
    md.update(answer([("t", 0, 2)]), 1.0)  # every partition led by broker 1
    md.forget_leader("t", 0, answered_by=2)  # sent to 2 before a refresh moved it to 1: older news
    assert md.leader_for("t", 0) is not None and md.updated_at == 1.0
    md.forget_leader("t", 0, answered_by=1)
    assert md.leader_for("t", 0) is None and md.updated_at is None
    assert md.leader_for("t", 1) is not None
    md.forget_leader("t", 1)  # no broker's answer (the request failed): forgotten too
    assert md.leader_for("t", 1) is None
