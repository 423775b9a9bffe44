"""Version negotiation and reconnect backoff: pure decisions."""

from __future__ import annotations

import pytest

from kafkawire.core.backoff import backoff_delay
from kafkawire.core.versions import UnsupportedVersionError, choose_version
from kafkawire.protocol.apis import PRODUCE


def test_highest_common_version_is_chosen() -> None:
    assert choose_version(PRODUCE, {0: (0, 11)}) == 11
    assert choose_version(PRODUCE, {0: (3, 99)}) == PRODUCE.max_version
    assert choose_version(PRODUCE, {0: (0, 11)}, max_version=7) == 7


def test_no_common_version_names_the_api() -> None:
    with pytest.raises(UnsupportedVersionError, match="Produce"):
        choose_version(PRODUCE, {0: (PRODUCE.max_version + 1, PRODUCE.max_version + 5)})
    with pytest.raises(UnsupportedVersionError, match="does not support Produce"):
        choose_version(PRODUCE, {})


def test_backoff_grows_exponentially_to_the_cap_with_bounded_jitter() -> None:
    mid = [backoff_delay(a, 100, 10_000, 0.5) for a in range(10)]
    assert mid[:4] == [0.1, 0.2, 0.4, 0.8]
    assert mid[-1] == 10.0
    assert backoff_delay(0, 100, 10_000, 0.0) == pytest.approx(0.08)
    assert backoff_delay(0, 100, 10_000, 0.999) == pytest.approx(0.12, abs=1e-3)
    assert backoff_delay(500, 100, 10_000, 0.5) == 10.0
