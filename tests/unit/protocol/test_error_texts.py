"""KafkaError's texts and names against librdkafka's own (the library inside the confluent-kafka
wheel, over ctypes): ``str()`` is ``rd_kafka_err2str``, ``name()`` is ``rd_kafka_err2name``, for every
code librdkafka has (its local negative codes too) and for codes nobody has."""

from __future__ import annotations

import ctypes

import pytest

from kafkawire import KafkaError
from kafkawire.protocol.error_table import BY_CODE
from tests.harness.mock_cluster import find_librdkafka


class _ErrDesc(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("name", ctypes.c_char_p), ("desc", ctypes.c_char_p)]


@pytest.fixture(scope="module")
def librdkafka() -> ctypes.CDLL:
    lib = ctypes.CDLL(find_librdkafka())
    lib.rd_kafka_err2str.restype = ctypes.c_char_p
    lib.rd_kafka_err2str.argtypes = [ctypes.c_int]
    lib.rd_kafka_err2name.restype = ctypes.c_char_p
    lib.rd_kafka_err2name.argtypes = [ctypes.c_int]
    lib.rd_kafka_get_err_descs.argtypes = [
        ctypes.POINTER(ctypes.POINTER(_ErrDesc)),
        ctypes.POINTER(ctypes.c_size_t),
    ]
    return lib


@pytest.fixture(scope="module")
def librdkafka_codes(librdkafka: ctypes.CDLL) -> list[int]:
    """Every code librdkafka has: the named entries of rd_kafka_get_err_descs."""
    descs = ctypes.POINTER(_ErrDesc)()
    count = ctypes.c_size_t()
    librdkafka.rd_kafka_get_err_descs(ctypes.byref(descs), ctypes.byref(count))
    return [descs[i].code for i in range(count.value) if descs[i].name]


# Codes of kafkawire's broker table librdkafka 2.16 lacks (KRaft-internal, never sent to a client):
# kafkawire keeps Kafka's name and a description of its own (README, "differs on purpose").
KRAFT_ONLY = {98, 99, 101, 102, 104, 105, 106, 107, 108, 109}


def _theirs(lib: ctypes.CDLL, code: int) -> tuple[str, str]:
    return lib.rd_kafka_err2str(code).decode(), lib.rd_kafka_err2name(code).decode()


def test_every_code_librdkafka_has_reads_as_librdkafkas(librdkafka: ctypes.CDLL, librdkafka_codes: list[int]) -> None:
    assert len(librdkafka_codes) > 180 and min(librdkafka_codes) < -100 and max(librdkafka_codes) > 100
    ours = {code: (KafkaError(code).str(), KafkaError(code).name()) for code in librdkafka_codes}
    assert {code: got for code, got in ours.items() if got != _theirs(librdkafka, code)} == {}
    assert str(KafkaError(3)) == 'KafkaError{code=UNKNOWN_TOPIC_OR_PART,val=3,str="Broker: Unknown topic or partition"}'


def test_every_other_code_reads_as_librdkafkas_but_the_kraft_ones(
    librdkafka: ctypes.CDLL, librdkafka_codes: list[int]
) -> None:
    """Codes librdkafka lacks answer "Err-N?" and "ERR_N?" there; so here, but for KRAFT_ONLY."""
    others = set(range(-400, 400)) - set(librdkafka_codes)
    differ = {code for code in others if (KafkaError(code).str(), KafkaError(code).name()) != _theirs(librdkafka, code)}
    assert differ == KRAFT_ONLY
    for code in KRAFT_ONLY:
        assert _theirs(librdkafka, code) == (f"Err-{code}?", f"ERR_{code}?")
        assert KafkaError(code).name() == BY_CODE[code].name and KafkaError(code).str().startswith("Broker: ")


def test_confluent_kafkas_kafka_error_reads_the_same(librdkafka_codes: list[int]) -> None:
    import confluent_kafka

    theirs = {
        code: (confluent_kafka.KafkaError(code).str(), confluent_kafka.KafkaError(code).name())
        for code in librdkafka_codes
    }
    ours = {code: (KafkaError(code).str(), KafkaError(code).name()) for code in librdkafka_codes}
    assert ours == theirs
    assert ours[3] == ("Broker: Unknown topic or partition", "UNKNOWN_TOPIC_OR_PART")
    assert ours[KafkaError._MSG_TIMED_OUT] == ("Local: Message timed out", "_MSG_TIMED_OUT")
