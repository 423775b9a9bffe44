"""Decoding bombs: what a peer sends may not make decoding allocate past its limits.

Bytes alone do not bound memory: an 11 KB batch can hold 19 million empty records (about 4 GB of
Python objects), and decompressing to a cap must not allocate more than the cap on the way.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import cramjam
import pytest

from kafkawire.records import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    BatchBuilder,
    DecodeError,
    crc32,
    crc32c,
    decode_batches,
)

MiB = 1024 * 1024
EMPTY_RECORD = b"\x0c\x00\x00\x00\x01\x01\x00"  # length 6, attributes, deltas 0, null key/value, no headers
assert len(EMPTY_RECORD) == 7  # the smallest a v2 record can be


def _v2_batch(body: bytes, count: int, codec: int = NONE) -> bytes:
    """A v2 batch around an already encoded (and compressed) ``body``, with a correct CRC."""
    after_crc = struct.pack(">hiqqqhii", codec, max(count - 1, 0), 0, 0, -1, -1, -1, count) + body
    head = struct.pack(">qiib", 0, 4 + 1 + 4 + len(after_crc), -1, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def _stream(chunk: bytes, times: int, codec: int) -> bytes:
    """``chunk * times`` compressed without ever holding the uncompressed whole."""
    if codec == GZIP:
        gz = zlib.compressobj(9, zlib.DEFLATED, 31)
        return b"".join(gz.compress(chunk) for _ in range(times)) + gz.flush()
    if codec == SNAPPY:  # xerial framing: one raw block per chunk, as the Java client writes
        block = bytes(cramjam.snappy.compress_raw(chunk))
        return b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + (struct.pack(">i", len(block)) + block) * times
    compressor = (
        cramjam.zstd.Compressor(level=3)
        if codec == ZSTD
        else cramjam.lz4.Compressor(level=0, content_checksum=False, block_linked=False)
    )
    for _ in range(times):
        compressor.compress(chunk)
    return bytes(compressor.finish())


def _peak_during(decode: Callable[[], object]) -> tuple[int, BaseException | None]:
    tracemalloc.start()
    try:
        decode()
        failure = None
    except DecodeError as exc:
        failure = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, failure


@pytest.mark.parametrize("codec", [GZIP, ZSTD, LZ4])
def test_millions_of_empty_records_in_a_small_batch_fail_before_they_exist(codec: int) -> None:
    count = 19_000_000  # 133 MB of empty records: under the 128 MiB decompression limit
    batch = _v2_batch(_stream(EMPTY_RECORD * 100_000, count // 100_000, codec), count, codec)
    assert len(batch) < 1 * MiB
    peak, failure = _peak_during(lambda: decode_batches(batch))
    assert failure is not None and "budget" in str(failure)
    assert peak < 4 * MiB  # refused from the header's count, before decompressing


def test_millions_of_empty_records_uncompressed_are_bounded_too() -> None:
    count = 3_000_000  # 21 MB on the wire, about 700 MB as Python objects
    batch = _v2_batch(EMPTY_RECORD * count, count)
    peak, failure = _peak_during(lambda: decode_batches(batch))
    assert failure is not None and "budget" in str(failure)
    assert peak < 4 * MiB


@pytest.mark.slow
def test_a_legacy_wrapper_of_millions_of_messages_is_refused_before_decoding_them() -> None:
    body = bytes((0, 0)) + struct.pack(">ii", -1, -1)  # magic 0, no compression, null key and value
    message = struct.pack(">qiI", 0, 4 + len(body), crc32(body)) + body
    count = 2_500_000  # 65 MB of 26-byte messages
    inner = _stream(message * 50_000, count // 50_000, GZIP)
    wrapper_body = bytes((0, GZIP)) + struct.pack(">i", -1) + struct.pack(">i", len(inner)) + inner
    wrapper = struct.pack(">qiI", count - 1, 4 + len(wrapper_body), crc32(wrapper_body)) + wrapper_body
    peak, failure = _peak_during(lambda: decode_batches(wrapper))
    assert failure is not None and "budget" in str(failure)
    assert peak < len(message) * count + 8 * MiB  # the decompressed wrapper, no message objects


def test_honest_batches_of_many_small_records_decode() -> None:
    builder = BatchBuilder()
    builder.append_records([(i, None, b"v", None) for i in range(200_000)])
    batches = decode_batches(builder.build(compression=ZSTD))
    assert sum(len(b.records) for b in batches) == 200_000


def test_a_budget_shared_between_calls_bounds_them_together() -> None:
    from kafkawire.records import DecodeBudget, DecodeBudgetError

    builder = BatchBuilder()
    builder.append_records([(0, b"k", b"v" * 100, None) for _ in range(1000)])
    batch = builder.build(compression=LZ4)
    budget = DecodeBudget(limit=1000 * (256 + 110) * 3 // 2)
    assert len(decode_batches(batch, budget=budget)[0].records) == 1000
    with pytest.raises(DecodeBudgetError):
        decode_batches(batch, budget=budget)


def test_headers_are_charged_before_they_are_made() -> None:
    from kafkawire.records import DecodeBudget, DecodeBudgetError

    builder = BatchBuilder()
    builder.append(0, None, None, [("", None)] * 10_000)
    batch = builder.build()
    with pytest.raises(DecodeBudgetError, match="10000 record headers"):
        decode_batches(batch, budget=DecodeBudget(limit=1_000_000))
    assert len(decode_batches(batch)[0].records[0].headers) == 10_000


# Decompression: the cap holds while decompressing, and nothing twice the size is ever allocated.
# Measured as the peak RSS of a fresh interpreter, which sees the codecs' native allocations too.
_CHILD = textwrap.dedent(
    """
    import json, sys
    from kafkawire.records import DecodeError, decode_batches, decompress

    def kib(field):  # VmRSS: resident now; VmHWM: the peak of this process image (ru_maxrss
        # would carry the forking parent's peak across exec)
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024

    mode, path, codec, cap = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

    def decode(data):
        if mode == "batch":
            decode_batches(data, max_decompressed_size=cap)
        else:
            decompress(codec, data, cap)

    try:  # a small input first: what loads on first use (the checksum's package...) is not the bomb's
        decode(open(path + ".small", "rb").read())
    except DecodeError:
        pass
    data = open(path, "rb").read()
    before = kib("VmRSS:")
    try:
        decode(data)
        failure = None
    except DecodeError as exc:
        failure = type(exc).__name__
    grown = kib("VmHWM:") - before
    print(json.dumps({"grown": grown, "failure": failure}))
    """
)


def _child(tmp_path: Path, mode: str, data: bytes, codec: int, cap: int) -> dict[str, object]:
    path = tmp_path / "input"
    path.write_bytes(data)
    small = _stream(bytes(1024), 1, codec)
    (tmp_path / "input.small").write_bytes(_v2_batch(small, 1, codec) if mode == "batch" else small)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(path), str(codec), str(cap)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def _zeros(codec: int, size: int) -> bytes:
    return _stream(bytes(MiB), size // MiB, codec)


@pytest.fixture(params=[GZIP, SNAPPY, LZ4, ZSTD], ids=["gzip", "snappy", "lz4", "zstd"])
def codec(request: pytest.FixtureRequest) -> Iterator[int]:
    yield request.param


def test_a_decompression_bomb_stops_at_the_cap_without_allocating_past_it(tmp_path: Path, codec: int) -> None:
    cap = 32 * MiB
    batch = _v2_batch(_zeros(codec, 96 * MiB), 1, codec)
    result = _child(tmp_path, "batch", batch, codec, cap)
    assert result["failure"] == "DecompressedSizeError"
    # One buffer of at most the cap, plus the codec's own state (a zstd window: about 2 MiB).
    assert isinstance(result["grown"], int) and result["grown"] < cap * 1.15


def test_decompressing_within_the_cap_holds_the_output_once(tmp_path: Path, codec: int) -> None:
    size = 24 * MiB
    result = _child(tmp_path, "decompress", _zeros(codec, size), codec, 32 * MiB)
    assert result["failure"] is None
    # Never the output twice (buffer and a copy): at most one buffer up to the cap.
    assert isinstance(result["grown"], int) and result["grown"] < 32 * MiB * 1.15
