"""The window statistics of ``stats_cb`` (``rtt``, ``throttle``, ``int_latency``, ``outbuf_latency``,
``batchsize``, ``batchcnt``), computed as librdkafka computes them (STATISTICS.md, "Window stats").

A `Window` collects values between two emits; `Window.rollover` hands back the interval's fields
and starts the next interval. The percentiles, mean and standard deviation come from an HDR
histogram with librdkafka's layout (`Histogram`), so they are the bucket values librdkafka would
print for the same samples, not exact order statistics: a percentile is the highest value of the
bucket it falls in, the standard deviation is taken over bucket midpoints. A value outside the
histogram's span is counted in ``outofrange`` and widens the span for the next interval (by a
fifth more than the farthest such value), as librdkafka adapts its histograms.

Quirks kept on purpose, because programs compare these numbers with librdkafka's: ``min`` takes a
sample of 0 as "no minimum yet" (a later non-zero sample replaces it), ``avg`` is the integer mean
of the raw samples, ``outofrange`` is not cleared by an interval that had no value in range.
"""

from __future__ import annotations

import math
from typing import Any

# The C struct in front of the counts on a 64-bit build: hdrsize is this plus 8 bytes a count.
_HEADER_BYTES = 112


class Histogram:
    """An HDR histogram over [lowest, highest] with ``digits`` significant decimal digits."""

    __slots__ = (
        "counts",
        "digits",
        "half_count",
        "half_magnitude",
        "highest",
        "highest_out",
        "length",
        "lowest",
        "lowest_out",
        "mask",
        "out_of_range",
        "sub_count",
        "total",
        "unit",
    )

    def __init__(self, lowest: int, highest: int, digits: int = 2) -> None:
        self.lowest, self.highest, self.digits = lowest, highest, digits
        magnitude = math.ceil(math.log2(2 * 10**digits))  # sub-buckets for single-unit resolution
        self.half_magnitude = max(magnitude, 1) - 1
        self.unit = max(math.floor(math.log2(lowest)), 0) if lowest > 0 else 0
        self.sub_count = 1 << (self.half_magnitude + 1)
        self.half_count = self.sub_count // 2
        self.mask = (self.sub_count - 1) << self.unit
        buckets, reach = 1, self.sub_count << self.unit
        while reach < highest:
            reach <<= 1
            buckets += 1
        self.length = (buckets + 1) * self.half_count  # librdkafka's count slots
        self.counts: dict[int, int] = {}  # slot -> count, the slots in use only (few per interval)
        self.total = 0
        self.out_of_range = 0
        self.lowest_out = lowest
        self.highest_out = highest

    @property
    def allocated_size(self) -> int:
        return _HEADER_BYTES + 8 * self.length

    def _index(self, v: int) -> int:
        if v < 0:
            return -1
        bucket = (v | self.mask).bit_length() - self.unit - (self.half_magnitude + 1)
        sub = v >> (bucket + self.unit)
        return ((bucket + 1) << self.half_magnitude) + (sub - self.half_count)

    def _range(self, index: int) -> tuple[int, int]:
        """(lowest value, width) of the bucket at ``index``."""
        if index < self.sub_count:
            bucket, sub = 0, index
        else:
            bucket, sub = (index >> self.half_magnitude) - 1, (index & (self.half_count - 1)) + self.half_count
        shift = bucket + self.unit
        return sub << shift, 1 << shift

    def record(self, v: int, count: int = 1) -> None:
        index = self._index(v)
        if not 0 <= index < self.length:
            self.out_of_range += count
            self.highest_out = max(self.highest_out, v)
            self.lowest_out = min(self.lowest_out, v)
            return
        self.counts[index] = self.counts.get(index, 0) + count
        self.total += count

    def reset(self) -> None:
        self.counts = {}
        self.total = 0

    def quantile(self, q: float) -> int:
        wanted = int(min(q, 100.0) / 100.0 * self.total + 0.5)
        seen = 0
        if not self.total:
            return 0
        for index in sorted(self.counts):
            seen += self.counts[index]
            if seen >= wanted:
                low, width = self._range(index)
                return low + width - 1
        return 0

    def mean(self) -> float:
        if not self.total:
            return 0.0
        total = 0
        for index, n in self.counts.items():
            low, width = self._range(index)
            total += n * (low + (width >> 1))
        return total / self.total

    def stddev(self) -> float:
        if not self.total:
            return 0.0
        mean = self.mean()
        deviation = 0.0
        for index, n in self.counts.items():
            low, width = self._range(index)
            deviation += (low + (width >> 1) - mean) ** 2 * n
        return math.sqrt(deviation / self.total)

    def adapted(self) -> Histogram:
        """The histogram for the next interval: this one emptied, or a wider one when values fell
        outside the span (kept as is, out-of-range count and all, when nothing was in range)."""
        if not self.total:
            return self
        low, high = self.lowest, self.highest
        if self.lowest - self.lowest_out > 0:
            low = self.lowest_out + int((self.lowest - self.lowest_out) * 0.2)
        if self.highest_out - self.highest > 0:
            high = self.highest_out + int((self.highest_out - self.highest) * 0.2)
        if (low, high) == (self.lowest, self.highest):
            self.reset()
            return self
        return Histogram(low, high, self.digits)


# The quantiles librdkafka prints, by field name.
QUANTILES = (("p50", 50.0), ("p75", 75.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p99_99", 99.99))


class Window:
    """Samples of one measure between two statistics emits (librdkafka's gauge averager)."""

    __slots__ = ("count", "hist", "maximum", "minimum", "total")

    def __init__(self, lowest: int, highest: int, digits: int = 2) -> None:
        self.hist = Histogram(lowest, highest, digits)
        self.minimum = self.maximum = self.total = self.count = 0

    def add(self, v: int, count: int = 1) -> None:
        """``count`` samples of value ``v`` (a batch's records that waited alike)."""
        v = int(v)
        if v > self.maximum:
            self.maximum = v
        if self.minimum == 0 or v < self.minimum:
            self.minimum = v
        self.total += v * count
        self.count += count
        self.hist.record(v, count)

    def rollover(self) -> dict[str, Any]:
        """This interval's fields, in librdkafka's order; the window starts over."""
        h = self.hist
        out: dict[str, Any] = {
            "min": self.minimum,
            "max": self.maximum,
            "avg": self.total // self.count if self.count else 0,
            "sum": self.total,
            "stddev": int(h.stddev()),
        }
        for name, q in QUANTILES:
            out[name] = h.quantile(q)
        out["outofrange"] = h.out_of_range
        out["hdrsize"] = h.allocated_size
        out["cnt"] = self.count
        self.minimum = self.maximum = self.total = self.count = 0
        self.hist = h.adapted()
        return out
