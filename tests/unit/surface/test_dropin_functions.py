"""The module-level functions and error shapes confluent-kafka users call, compared with the
installed confluent-kafka as the judge."""

from __future__ import annotations

import confluent_kafka as ck
import pytest

import kafkawire
from kafkawire import KafkaError, KafkaException, Messages


@pytest.mark.parametrize("key", [b"", b"key", b"\x00\xff" * 33, "ключ".encode()])
@pytest.mark.parametrize("count", [1, 3, 10, 1000])
def test_partition_functions_match_confluent(key: bytes, count: int) -> None:
    for name in ("murmur2", "consistent", "fnv1a"):
        assert getattr(kafkawire, name)(key, count) == getattr(ck, name)(key, count), name


@pytest.mark.parametrize(
    ("key", "count", "error"),
    [(b"k", 0, ValueError), (b"k", -1, ValueError), ("k", 3, TypeError), (None, 3, TypeError), (b"k", "3", TypeError)],
)
def test_partition_functions_check_input_as_confluent(key: object, count: object, error: type) -> None:
    for module in (kafkawire, ck):
        with pytest.raises(error):
            module.murmur2(key, count)  # type: ignore[arg-type]


def test_version_shapes() -> None:
    assert kafkawire.version() == kafkawire.__version__
    assert kafkawire.libversion() == ck.libversion()  # the librdkafka release followed (2.16.0), as confluent-kafka's


def test_kafka_exception_without_arguments_and_error_keyword() -> None:
    assert KafkaException().args == () and KafkaException().error is None
    assert KafkaException(5).args[0] == KafkaError(error=5)
    assert KafkaError(error=5).name() == ck.KafkaError(error=5).name()


def test_unknown_codes_named_as_librdkafka() -> None:
    ours, theirs = KafkaError(12345), ck.KafkaError(12345)
    assert (ours.name(), ours.str()) == (theirs.name(), theirs.str())


def test_messages_is_a_read_only_sequence() -> None:
    msgs = [kafkawire.Message("t", 0, i) for i in range(3)]
    batch = Messages(msgs)
    assert list(batch) == msgs and batch.count() == 3 and isinstance(batch[1:], Messages)
    assert not hasattr(batch, "append") and not isinstance(batch, list)
    copy = batch.records()
    copy.clear()
    assert len(batch) == 3 and Messages().is_empty() is True


def test_asyncio_module_path() -> None:
    from kafkawire.aio import AIOProducer

    assert AIOProducer is kafkawire.AIOProducer
