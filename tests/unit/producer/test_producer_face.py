"""The Producer face's own decisions, without a broker (nothing here is ever sent)."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from kafkawire import KafkaError, KafkaException, Producer
from kafkawire.core.transactions import Call


def test_a_transactional_call_that_outlives_its_wait_raises_kafka_exception_not_timeout_error() -> None:
    """Builtin TimeoutError never escapes: a conversation that does not end in time is a retriable
    ``_TIMED_OUT`` (as confluent-kafka raises), and the call may be made again."""
    p = Producer({"bootstrap.servers": "127.0.0.1:9", "transactional.id": "face-timeout"})
    try:
        txn = p._engine.txn
        assert txn is not None
        txn.state.require(Call.INIT)
        with pytest.raises(KafkaException) as exc:
            p._txn_call(Call.INIT, lambda deadline: Future(), 0)  # a conversation that never ends
        error = exc.value.args[0]
        assert (error.code(), error.retriable(), error.fatal()) == (KafkaError._TIMED_OUT, True, False)
        txn.state.require(Call.INIT)  # not left running: init_transactions() may be called again
    finally:
        p.close(0)


def test_each_record_takes_its_buffer_charge_and_the_report_frees_it() -> None:
    """What admission takes from ``queue.buffering.max.kbytes`` is `buffer_charge` of the record's
    value, librdkafka's (the key and headers are not counted; admission writes it inline), and a
    purge gives all of it back."""
    from kafkawire.core.lane_state import buffer_charge

    p = Producer({"bootstrap.servers": "127.0.0.1:9"})  # nothing listens: the records wait for metadata
    try:
        engine = p._engine
        p.produce("t", b"v" * 100, b"key")
        p.produce("t", b"w" * 7, headers=[("h", b"x")])
        p.produce("t", None, b"key")
        assert (engine.state.outstanding, engine.state.buffered_bytes) == (3, 107)
        assert buffer_charge(b"v" * 100) + buffer_charge(b"w" * 7) + buffer_charge(None) == 107
        p.purge()
        p.poll(0)
        assert (engine.state.outstanding, engine.state.buffered_bytes) == (0, 0)
    finally:
        p.close(0)


def test_a_plain_record_is_served_by_the_c_lane_or_its_twin() -> None:
    """Which path queued each record (the lane state's counters): a plain record joining an open
    batch is the C lane's when the extension is built, the Python twin's when not; the first of a
    batch is the twin's either way, and one with headers the Python path's alone."""
    from kafkawire.core.lane_state import served
    from kafkawire.native import native

    p = Producer({"bootstrap.servers": "127.0.0.1:9", "linger.ms": 60_000})
    try:
        p._engine.client.metadata.partition_counts["t"] = 1
        p.produce("t", b"a", partition=0)
        p.produce("t", b"b", partition=0)
        p.produce("t", b"c", partition=0, headers=[("h", b"x")])
        lane = {"lane": 1, "twin": 1} if native is not None else {"lane": 0, "twin": 2}
        assert served(p._engine.state) == {**lane, "bulk": 0, "slow": 1}
    finally:
        p.purge()
        p.close(0)
