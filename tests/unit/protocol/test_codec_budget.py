"""The codec's decoding budget (issue 13 defect 6): an array's count is charged before its elements
are built, so an answer promising millions of elements fails at once, and what a decoding is
charged covers what it really allocates."""

from __future__ import annotations

import tracemalloc
import uuid

import pytest

from kafkawire.protocol import codec
from kafkawire.protocol.apis import FETCH, METADATA
from kafkawire.protocol.primitives import DecodeBudget, DecodeBudgetError

MiB = 1 << 20


def metadata_body(brokers: int, topics: int = 1, partitions: int = 3) -> dict[str, object]:
    return {
        "brokers": [{"node_id": i, "host": "127.0.0.1", "port": 9092, "rack": None} for i in range(brokers)],
        "cluster_id": "c",
        "controller_id": 0,
        "topics": [
            {
                "name": f"topic-{t}",
                "topic_id": uuid.UUID(int=t + 1),
                "partitions": [
                    {"partition_index": p, "leader_id": 0, "replica_nodes": [0, 1, 2], "isr_nodes": [0, 1]}
                    for p in range(partitions)
                ],
            }
            for t in range(topics)
        ],
    }


@pytest.mark.parametrize("version", [1, 9, 12])
def test_a_count_past_its_limit_fails_before_the_elements_are_built(version: int) -> None:
    data = codec.encode(METADATA.response, version, metadata_body(30_000))
    tracemalloc.start()
    try:
        with pytest.raises(DecodeBudgetError, match=r"30000 elements in brokers \(at most 10000"):
            codec.decode(METADATA.response, version, data, budget=DecodeBudget(1 << 40, {"brokers": 10_000}))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Decoding them would take about 9 MB; refused at the count, almost nothing was allocated.
    assert peak < MiB, f"{peak} bytes allocated before the refusal"


def test_nested_counts_are_named_by_their_path() -> None:
    data = codec.encode(METADATA.response, 12, metadata_body(1, topics=2, partitions=50))
    limits = {"topics.partitions": 49}
    with pytest.raises(DecodeBudgetError, match=r"50 elements in topics\.partitions"):
        codec.decode(METADATA.response, 12, data, budget=DecodeBudget(1 << 40, limits))
    assert (
        len(codec.decode(METADATA.response, 12, data, budget=DecodeBudget(1 << 40, {"topics.partitions": 50})).topics)
        == 2
    )


@pytest.mark.parametrize("version", [1, 12])
def test_the_allocation_charged_covers_what_decoding_keeps(version: int) -> None:
    """The estimates per element are conservative: a decoded answer never takes more memory than
    it was charged (so a budget bounds memory, not just a count)."""
    data = codec.encode(METADATA.response, version, metadata_body(50, topics=20, partitions=30))
    budget = DecodeBudget(1 << 40)
    codec.decode(METADATA.response, version, data)  # compile the plan outside the measurement
    tracemalloc.start()
    try:
        body = codec.decode(METADATA.response, version, data, budget=budget)
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(body.topics[0].partitions) == 30
    assert budget.limit - budget.remaining >= kept


def test_an_answer_over_its_allocation_budget_is_refused() -> None:
    data = codec.encode(METADATA.response, 12, metadata_body(1, topics=1, partitions=5_000))
    with pytest.raises(DecodeBudgetError, match=r"5000 elements in topics\.partitions would exceed"):
        codec.decode(METADATA.response, 12, data, budget=DecodeBudget(len(data) * 4))


def test_without_a_budget_decoding_is_bounded_per_byte() -> None:
    """The default budget: ALLOCATION_PER_BYTE per byte decoded plus ALLOCATION_SLACK. Real answers
    fit it; records (bytes) cost their content once, which the frame size bounds already."""
    fetch = {
        "responses": [
            {"topic": "t", "partitions": [{"partition_index": p, "records": b"x" * 1000} for p in range(100)]}
        ]
    }
    for api, version, body in [(METADATA, 12, metadata_body(100, topics=50, partitions=20)), (FETCH, 12, fetch)]:
        data = codec.encode(api.response, version, body)
        budget = DecodeBudget(codec.allocation_limit(len(data)))
        codec.decode(api.response, version, data, budget=budget)
        assert budget.limit - budget.remaining < codec.ALLOCATION_PER_BYTE * len(data) // 2
