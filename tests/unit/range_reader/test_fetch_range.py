"""fetch_range's bounds over the scripted stand-in client on a real IO thread: whatever the
leader answers (records, a batch that fails its checksum, nothing at all), the read ends in records
or a KafkaException within its timeout; CorruptRecordError and builtin TimeoutError never escape,
and every inner request is bounded by the time left."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafkawire.core.kafka_error import KafkaError, KafkaException
from kafkawire.io.io_engine import Engine
from kafkawire.protocol.apis import FETCH
from kafkawire.range_reader import FetchSettings, fetch_range
from kafkawire.records import BatchBuilder
from tests.unit.stand_in import Call, LeaderStub


@pytest.fixture
def client() -> Iterator[LeaderStub]:
    stub = LeaderStub()
    stub.leaders = {0: 1}
    stub.engine = Engine("test-fetch-range")  # type: ignore[assignment]
    yield stub
    stub.engine.stop()  # type: ignore[attr-defined]


def batch(values: list[bytes], *, corrupt: bool = False) -> bytes:
    builder = BatchBuilder()
    for value in values:
        builder.append(1_700_000_000_000, None, value)
    data = bytearray(builder.build())
    if corrupt:
        data[-1] ^= 0xFF  # the CRC covers the records: this one no longer matches
    return bytes(data)


def fetch_answer(records: bytes, high_watermark: int) -> dict[str, Any]:
    return {
        "responses": [
            {
                "topic": "t",
                "partitions": [
                    {"partition_index": 0, "error_code": 0, "high_watermark": high_watermark, "records": records}
                ],
            }
        ]
    }


def settings(timeout: float) -> FetchSettings:
    return FetchSettings(timeout=timeout, backoff=0.01, max_wait_ms=10)


def test_records_of_the_range_are_read(client: LeaderStub) -> None:
    client.handler = lambda call: fetch_answer(batch([b"a", b"b", b"c"]), 3) if call.api == FETCH.name else None
    got = [r.value for _, records in fetch_range(client, "t", 0, 1, 3, settings(5)) for r in records]  # type: ignore[arg-type]
    assert got == [b"b", b"c"]


def test_a_corrupt_batch_is_fetched_again_then_fails_as_kafka_exception(client: LeaderStub) -> None:
    client.handler = lambda call: fetch_answer(batch([b"a"], corrupt=True), 1) if call.api == FETCH.name else None
    with pytest.raises(KafkaException) as exc:
        list(fetch_range(client, "t", 0, 0, 1, settings(0.5)))  # type: ignore[arg-type]
    error = exc.value.args[0]
    assert error.code() == KafkaError._TIMED_OUT and "_BAD_MSG" in error.str()
    assert len(client.requests(FETCH)) >= 2  # asked again before giving up


def test_a_silent_leader_fails_within_the_timeout(client: LeaderStub) -> None:
    def handler(call: Call) -> Any:
        return None  # never answers: the client's request timeout fails each request

    client.handler = handler
    with pytest.raises(KafkaException) as exc:
        list(fetch_range(client, "t", 0, 0, 1, settings(0.5)))  # type: ignore[arg-type]
    assert exc.value.args[0].code() == KafkaError._TIMED_OUT
    fetches = client.requests(FETCH)
    assert fetches and all(c.timeout is not None and c.timeout <= 0.5 for c in fetches)
