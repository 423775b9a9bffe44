"""OpenTelemetry's ``MetricsData`` protobuf (opentelemetry/proto/metrics/v1), written by hand.

KIP-714 pushes client metrics as one OTLP ``MetricsData``; a client needs only a few of its
messages, so they are encoded here directly rather than through a protobuf library:

    MetricsData     1: ResourceMetrics resource_metrics (repeated)
    ResourceMetrics 1: Resource resource          2: ScopeMetrics scope_metrics (repeated)
    Resource        1: KeyValue attributes (repeated)
    ScopeMetrics    1: InstrumentationScope scope 2: Metric metrics (repeated)
    InstrumentationScope 1: string name            2: string version
    Metric          1: string name  2: string description  5: Gauge gauge  7: Sum sum
    Gauge           1: NumberDataPoint data_points (repeated)
    Sum             1: NumberDataPoint data_points 2: enum aggregation_temporality 3: bool is_monotonic
    NumberDataPoint 2: fixed64 start_time_unix_nano 3: fixed64 time_unix_nano
                    4: double as_double  6: sfixed64 as_int  7: KeyValue attributes (repeated)
    KeyValue        1: string key  2: AnyValue value
    AnyValue        1: string string_value  3: int64 int_value

Wire types: 0 varint, 1 eight bytes (little-endian), 2 length-delimited.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

DELTA = 1  # AggregationTemporality
CUMULATIVE = 2


@dataclass(frozen=True)
class Point:
    value: int | float
    is_int: bool
    start_ns: int
    time_ns: int
    node_id: int | None = None  # the ``node.id`` attribute of a per-broker point


@dataclass(frozen=True)
class Series:
    name: str
    description: str
    points: list[Point] = field(default_factory=list)
    is_sum: bool = False
    temporality: int = CUMULATIVE  # of a Sum


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64 travel as ten bytes, two's complement
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _message(number: int, body: bytes) -> bytes:
    return _key(number, 2) + _varint(len(body)) + body


def _string(number: int, text: str) -> bytes:
    return _message(number, text.encode())


def _key_value(key: str, value: str | int) -> bytes:
    any_value = _string(1, value) if isinstance(value, str) else _key(3, 0) + _varint(value)
    return _string(1, key) + _message(2, any_value)


def _point(p: Point) -> bytes:
    body = _key(2, 1) + struct.pack("<Q", p.start_ns) + _key(3, 1) + struct.pack("<Q", p.time_ns)
    if p.is_int:
        body += _key(6, 1) + struct.pack("<q", int(p.value))
    else:
        body += _key(4, 1) + struct.pack("<d", float(p.value))
    if p.node_id is not None:
        body += _message(7, _key_value("node.id", p.node_id))
    return body


def _metric(s: Series) -> bytes:
    points = b"".join(_message(1, _point(p)) for p in s.points)
    body = _string(1, s.name) + _string(2, s.description)
    if s.is_sum:
        return body + _message(7, points + _key(2, 0) + _varint(s.temporality) + _key(3, 0) + _varint(1))
    return body + _message(5, points)


def metrics_data(resource: dict[str, str], scope: tuple[str, str], series: list[Series]) -> bytes:
    """One ``MetricsData``: one resource with ``resource`` attributes, one scope (name, version)."""
    scope_body = _string(1, scope[0]) + _string(2, scope[1])
    scope_metrics = _message(1, scope_body) + b"".join(_message(2, _metric(s)) for s in series)
    resource_body = b"".join(_message(1, _key_value(k, v)) for k, v in resource.items())
    resource_metrics = (_message(1, resource_body) if resource else b"") + _message(2, scope_metrics)
    return _message(1, resource_metrics)
