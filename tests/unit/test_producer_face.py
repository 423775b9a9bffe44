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
    size (admission writes the formula inline), and a purge gives all of it back."""
    from kafkawire.producer.delivery import buffer_charge
    from kafkawire.records import record_size_upper_bound

    p = Producer({"bootstrap.servers": "127.0.0.1:9"})  # nothing listens: the records wait for metadata
    try:
        engine = p._engine
        p.produce("t", b"v" * 100, b"key")
        p.produce("t", b"w" * 7, headers=[("h", b"x")])
        sizes = [record_size_upper_bound(b"key", b"v" * 100), record_size_upper_bound(None, b"w" * 7, [("h", b"x")])]
        assert (engine.state.outstanding, engine.state.buffered_bytes) == (2, sum(buffer_charge(s) for s in sizes))
        p.purge()
        p.poll(0)
        assert (engine.state.outstanding, engine.state.buffered_bytes) == (0, 0)
    finally:
        p.close(0)
