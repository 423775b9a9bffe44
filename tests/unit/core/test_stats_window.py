"""core/stats_window: the HDR histogram and windows of stats_cb give librdkafka's numbers."""

from __future__ import annotations

import pytest

from kafkawire.core.stats_window import Histogram, Window


@pytest.fixture(scope="module")
def million() -> Histogram:
    """0..999,999 once each, over [1, 10,000,000] at 3 digits (the HDR reference vectors)."""
    h = Histogram(1, 10_000_000, 3)
    for v in range(1_000_000):
        h.record(v)
    return h


def test_quantiles_are_the_highest_value_of_their_bucket(million: Histogram) -> None:
    expected = {50: 500223, 75: 750079, 90: 900095, 95: 950271, 99: 990207, 99.9: 999423, 99.99: 999935}
    assert {q: million.quantile(q) for q in expected} == expected
    assert million.total == 1_000_000 and million.out_of_range == 0


def test_mean_and_stddev_are_over_bucket_midpoints(million: Histogram) -> None:
    assert million.mean() == pytest.approx(500000.013312, abs=1e-6)
    assert million.stddev() == pytest.approx(288675.140368, abs=1e-6)


def test_values_outside_the_span_are_counted_apart() -> None:
    h = Histogram(459876, 12718782, 5)
    for v in (459876, 669187, 711612, 816326, 931423, 1033197, 1131895, 2477317, 3964974, 12718782):
        h.record(v)
    assert h.quantile(50) == 1048575
    h.record(-1)
    assert h.out_of_range == 1 and h.lowest_out == -1


@pytest.mark.parametrize(
    ("highest", "size"),
    [(100_000, 11376), (500_000, 13424), (5_000_000, 17520), (1_000_000, 14448), (10_000, 8304)],
)
def test_hdrsize_is_librdkafkas_allocation(highest: int, size: int) -> None:
    # int_latency/outbuf_latency, rtt, throttle, batchsize (message.max.bytes), batchcnt (batch.num.messages)
    assert Histogram(0, highest).allocated_size == size


def test_window_rollover_reports_the_interval_then_starts_over() -> None:
    w = Window(0, 500_000)
    for v in (1000, 2000, 3000, 0):
        w.add(v)
    out = w.rollover()
    assert list(out) == [
        "min",
        "max",
        "avg",
        "sum",
        "stddev",
        "p50",
        "p75",
        "p90",
        "p95",
        "p99",
        "p99_99",
        "outofrange",
        "hdrsize",
        "cnt",
    ]
    # a sample of 0 takes the minimum's place, as librdkafka's averager does
    assert (out["min"], out["max"], out["avg"], out["sum"], out["cnt"]) == (0, 3000, 1500, 6000, 4)
    assert (out["p50"], out["p99_99"], out["outofrange"], out["hdrsize"]) == (1003, 3007, 0, 13424)
    assert out["stddev"] == 1118
    empty = w.rollover()
    assert empty == dict.fromkeys(empty, 0) | {"hdrsize": 13424}


def test_an_out_of_range_value_widens_the_next_interval() -> None:
    w = Window(0, 500_000)
    w.add(1000)
    w.add(526_202)  # past the span: librdkafka's rtt window after a long Fetch wait
    out = w.rollover()
    assert (out["outofrange"], out["cnt"], out["max"], out["hdrsize"]) == (1, 2, 526_202, 13424)
    assert w.hist.highest == 526_202 + int(26_202 * 0.2)
    w.add(526_202)
    again = w.rollover()
    assert (again["outofrange"], again["hdrsize"], again["p50"]) == (0, 14448, 528383)


def test_samples_with_a_count_weigh_as_many() -> None:
    one, many = Window(0, 100_000), Window(0, 100_000)
    for _ in range(5):
        one.add(700)
    many.add(700, 5)
    assert one.rollover() == many.rollover()
