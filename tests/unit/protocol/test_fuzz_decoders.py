"""Fuzzing every decoder a peer's bytes reach: each API's response (header included) at each
version, and record batches (v0, v1, v2, every codec).

Valid messages are drawn, encoded, then damaged (bytes changed, cut, inserted; CRCs recomputed so
that the parsers behind the checksum meet the damage). Whatever the damage, decoding raises only
our own DecodeError, and allocates at most a bounded amount per input byte.
"""

from __future__ import annotations

import struct
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkawire.protocol import headers
from kafkawire.protocol.apis import ALL_APIS
from kafkawire.protocol.primitives import DecodeError
from kafkawire.protocol.schema import Api
from kafkawire.records import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    BatchBuilder,
    DecodeBudget,
    build_control_batch,
    crc32,
    crc32c,
    decode_batches,
    encode_message_set,
)
from tests.harness.strategies import message_values

MiB = 1024 * 1024
# 2,500 cases in all per run (1,200 responses, 500 random frames, 800 record-batch sets).
FUZZ_RESPONSES = settings(max_examples=1200, deadline=None, suppress_health_check=list(HealthCheck))
FUZZ_BATCHES = settings(max_examples=800, deadline=None, suppress_health_check=list(HealthCheck))

RESPONSES = [(api, v) for api in ALL_APIS for v in range(api.min_version, api.max_version + 1)]

# A decoded protocol object (a Struct dict, a list, a str) costs a few hundred bytes and takes at
# least one input byte: more than this per byte would mean a count was trusted beyond the bytes.
BYTES_PER_INPUT_BYTE = 1024
BASE_ALLOWANCE = 256 * 1024


Edit = tuple[str, int, int]  # (kind, position, byte): set, insert, delete or cut

edits = st.lists(
    st.tuples(
        st.sampled_from(["set", "set", "set", "insert", "delete", "cut"]),
        st.integers(min_value=0, max_value=2**16),
        st.integers(min_value=0, max_value=255),
    ),
    min_size=1,
    max_size=4,
)


def _damage(data: bytes, changes: list[Edit], start: int = 0) -> bytearray:
    out = bytearray(data)
    for kind, position, byte in changes:
        if len(out) <= start:
            break
        at = start + position % (len(out) - start)
        if kind == "set":
            out[at] = byte if out[at] != byte else byte ^ 0xFF
        elif kind == "insert":
            out.insert(at, byte)
        elif kind == "delete":
            del out[at]
        else:
            del out[at:]
    return out


def _peak_allocation(decode: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        decode()
    except DecodeError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def _decode_within_bounds(decode: Callable[[], Any], size: int) -> None:
    """The least of two measures of ``decode``'s peak allocation: tracemalloc also counts what
    other threads allocate meanwhile, which only ever adds (an earlier test's leftover thread once
    charged 394 KB to a 16-byte answer, and not when Hypothesis ran the same example again); the
    decoding itself allocates the same each time."""
    peak = min(_peak_allocation(decode) for _ in range(2))
    assert peak < BASE_ALLOWANCE + BYTES_PER_INPUT_BYTE * size


@FUZZ_RESPONSES
@given(data=st.data(), case=st.sampled_from(RESPONSES), changes=edits)
def test_damaged_responses_raise_only_decode_errors(
    data: st.DataObject, case: tuple[Api, int], changes: list[Edit]
) -> None:
    api, version = case
    body = data.draw(message_values(api.response, version), label=f"{api.name} v{version}")
    frame = _damage(headers.encode_response(api, version, 7, body), changes)
    _decode_within_bounds(lambda: headers.decode_response(api, version, bytes(frame)), len(frame))


@settings(max_examples=500, deadline=None)
@given(case=st.sampled_from(RESPONSES), raw=st.binary(max_size=256))
def test_random_responses_raise_only_decode_errors(case: tuple[Api, int], raw: bytes) -> None:
    api, version = case
    _decode_within_bounds(lambda: headers.decode_response(api, version, raw), len(raw))


# --- record batches ------------------------------------------------------------------------------

_blob = st.one_of(st.none(), st.binary(max_size=40))
_headers = st.lists(st.tuples(st.text(max_size=6), _blob), max_size=3)
_records = st.lists(st.tuples(st.integers(0, 2**41), _blob, _blob, _headers), min_size=1, max_size=12)


@st.composite
def _batch(draw: st.DrawFn) -> bytes:
    records = draw(_records)
    magic = draw(st.sampled_from([0, 1, 2, 2]))
    if magic == 2:
        if draw(st.integers(0, 9)) == 0:
            return build_control_batch(
                draw(st.booleans()), 3, 1000, 0, records[0][0], base_offset=draw(st.integers(0, 99))
            )
        builder = BatchBuilder()
        builder.append_records(records)
        codec = draw(st.sampled_from([NONE, GZIP, SNAPPY, LZ4, ZSTD]))
        transactional = draw(st.booleans())
        return builder.build(
            producer_id=1000 if transactional else -1,
            producer_epoch=0 if transactional else -1,
            base_sequence=0 if transactional else -1,
            transactional=transactional,
            compression=codec,
            base_offset=draw(st.integers(0, 2**40)),
        )
    codec = draw(st.sampled_from([NONE, GZIP, SNAPPY, LZ4]))
    return encode_message_set(magic, [(t, k, v) for t, k, v, _h in records], codec)


def _fix_checksums(data: bytearray) -> bytearray:
    """Recompute each top-level batch's (v2: CRC-32C) or message's (v0/v1: CRC-32) checksum where
    the framing still holds, so that damage behind the checksum reaches the parsers."""
    pos = 0
    while len(data) - pos >= 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 5 or end > len(data):
            break
        magic = data[pos + 16]
        if magic == 2 and length >= 9:
            struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : end])))
        elif magic in (0, 1):
            struct.pack_into(">I", data, pos + 12, crc32(bytes(data[pos + 16 : end])))
        pos = end
    return data


@FUZZ_BATCHES
@given(batches=st.lists(_batch(), min_size=1, max_size=3), changes=edits, fix=st.booleans())
def test_damaged_record_batches_raise_only_decode_errors(batches: list[bytes], changes: list[Edit], fix: bool) -> None:
    damaged = _damage(b"".join(batches), changes)
    if fix:
        damaged = _fix_checksums(damaged)
    raw = bytes(damaged)
    budget = DecodeBudget(limit=4 * MiB)
    tracemalloc.start()
    try:
        decode_batches(raw, max_decompressed_size=MiB, budget=budget)
    except DecodeError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # The budget's limit bounds what decoding keeps; decompression may hold one more capped buffer.
    assert peak < budget.limit + 2 * MiB


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_undamaged_batches_of_each_magic_still_decode(magic: int) -> None:
    """The fuzz above would pass on a decoder that refuses everything: this one may not."""
    records = [(1_700_000_000_000 + i, b"k%d" % i, b"v" * i, None) for i in range(5)]
    if magic == 2:
        builder = BatchBuilder()
        builder.append_records(records)
        data = builder.build(compression=ZSTD)
    else:
        data = encode_message_set(magic, [(t, k, v) for t, k, v, _h in records], LZ4)
    decoded = decode_batches(data)
    assert [r.value for b in decoded for r in b.records] == [v for _t, _k, v, _h in records]
