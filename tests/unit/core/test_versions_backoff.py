"""Version negotiation and reconnect backoff: pure decisions."""

from __future__ import annotations

import pytest

from kafkawire.core.backoff import backoff_delay
from kafkawire.core.versions import LACKED, UnsupportedVersionError, choose_version
from kafkawire.protocol.apis import API_BY_NAME, CREATE_PARTITIONS, DESCRIBE_USER_SCRAM_CREDENTIALS, PRODUCE


def test_highest_common_version_is_chosen() -> None:
    assert choose_version(PRODUCE, {0: (0, 11)}) == 11
    assert choose_version(PRODUCE, {0: (3, 99)}) == PRODUCE.max_version
    assert choose_version(PRODUCE, {0: (0, 11)}, max_version=7) == 7


def test_no_common_version_names_the_api() -> None:
    with pytest.raises(UnsupportedVersionError, match="Produce"):
        choose_version(PRODUCE, {0: (PRODUCE.max_version + 1, PRODUCE.max_version + 5)})
    with pytest.raises(UnsupportedVersionError, match="does not support Produce"):
        choose_version(PRODUCE, {})


def test_an_api_librdkafka_words_is_refused_in_its_words_missing_or_out_of_range() -> None:
    """librdkafka's check is one for both (no version in its range): so is its text here."""
    scram = "DescribeUserScramCredentials API (KIP-554) not supported by broker"
    with pytest.raises(UnsupportedVersionError) as missing:
        choose_version(DESCRIBE_USER_SCRAM_CREDENTIALS, {})
    assert str(missing.value) == scram
    beyond = CREATE_PARTITIONS.max_version + 1
    with pytest.raises(UnsupportedVersionError) as gap:
        choose_version(CREATE_PARTITIONS, {CREATE_PARTITIONS.key: (beyond, beyond + 1)})
    assert str(gap.value) == "CreatePartitions (KIP-195) not supported by broker, requires broker version >= 1.0.0"


def test_every_worded_api_is_one_kafkawire_speaks() -> None:
    assert set(LACKED) <= set(API_BY_NAME)


def test_backoff_grows_exponentially_to_the_cap_with_bounded_jitter() -> None:
    mid = [backoff_delay(a, 100, 10_000, 0.5) for a in range(10)]
    assert mid[:4] == [0.1, 0.2, 0.4, 0.8]
    assert mid[-1] == 10.0
    assert backoff_delay(0, 100, 10_000, 0.0) == pytest.approx(0.08)
    assert backoff_delay(0, 100, 10_000, 0.999) == pytest.approx(0.12, abs=1e-3)
    assert backoff_delay(500, 100, 10_000, 0.5) == 10.0
