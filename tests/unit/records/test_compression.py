"""Codec round trips, compression levels, xerial snappy and the decompression size limit."""

from __future__ import annotations

import contextlib
import gzip
import random
import struct

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkawire.records import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    DecodeError,
    DecompressedSizeError,
    compress,
    decompress,
)
from kafkawire.records.crc import crc32, crc32c

CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]
SAMPLE = b"".join(b"record %d: {'user': %d, 'action': 'click'}\n" % (i, i % 97) for i in range(3000))

# Every level Kafka/librdkafka accept per codec, -1 and None meaning "codec default".
LEVELS = [
    *((GZIP, level) for level in [None, -1, 0, 1, 6, 9]),
    *((LZ4, level) for level in [None, -1, 0, 1, 3, 9, 12]),
    *((ZSTD, level) for level in [None, -1, -131072, -5, 1, 3, 19, 22]),
    (SNAPPY, None),
    (SNAPPY, -1),
    (NONE, None),
]


def test_crcs_match_known_check_values() -> None:
    # The standard "123456789" check values of CRC-32C and CRC-32.
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32(b"123456789") == 0xCBF43926
    assert crc32c(memoryview(b"xx123456789")[2:]) == 0xE3069283


@pytest.mark.parametrize(("codec", "level"), LEVELS)
def test_round_trip_at_each_level(codec: int, level: int | None) -> None:
    assert decompress(codec, compress(codec, SAMPLE, level)) == SAMPLE


@pytest.mark.parametrize("codec", CODECS)
def test_empty_and_tiny_inputs(codec: int) -> None:
    for data in (b"", b"x", bytes(range(256))):
        assert decompress(codec, compress(codec, data)) == data


@settings(max_examples=60, deadline=None)
@given(codec=st.sampled_from(CODECS), data=st.binary(max_size=3000))
def test_round_trip_arbitrary_bytes(codec: int, data: bytes) -> None:
    assert decompress(codec, compress(codec, data)) == data


def test_levels_change_the_output() -> None:
    assert len(compress(GZIP, SAMPLE, 1)) > len(compress(GZIP, SAMPLE, 9))
    assert len(compress(ZSTD, SAMPLE, -50)) > len(compress(ZSTD, SAMPLE, 19))
    assert len(compress(LZ4, SAMPLE, 0)) > len(compress(LZ4, SAMPLE, 12))


@pytest.mark.parametrize(
    ("codec", "level", "allowed"),
    [
        (GZIP, 10, "[0, 9]"),
        (GZIP, -2, "[0, 9]"),
        (LZ4, 13, "[0, 12]"),
        (ZSTD, 23, "[-131072, 22]"),
        (ZSTD, -131073, "[-131072, 22]"),
    ],
)
def test_out_of_range_level_names_the_range(codec: int, level: int, allowed: str) -> None:
    with pytest.raises(ValueError, match=r"must be -1 or in " + allowed.replace("[", r"\[").replace("]", r"\]")):
        compress(codec, SAMPLE, level)


@pytest.mark.parametrize("codec", [NONE, SNAPPY])
def test_codecs_without_levels_reject_one(codec: int) -> None:
    with pytest.raises(ValueError, match="no compression levels"):
        compress(codec, SAMPLE, 1)


def test_unknown_codec() -> None:
    with pytest.raises(ValueError, match="unknown compression codec"):
        compress(5, SAMPLE)
    with pytest.raises(DecodeError, match="unknown compression codec"):
        decompress(7, SAMPLE)


def test_gzip_is_standard_gzip() -> None:
    assert gzip.decompress(compress(GZIP, SAMPLE)) == SAMPLE
    assert decompress(GZIP, gzip.compress(SAMPLE)) == SAMPLE


def test_snappy_writes_a_raw_block() -> None:
    packed = compress(SNAPPY, SAMPLE)
    assert bytes(cramjam.snappy.decompress_raw(packed)) == SAMPLE


def _xerial(data: bytes, chunk: int) -> bytes:
    """The snappy-java SnappyOutputStream framing, built from its published layout."""
    out = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for start in range(0, len(data), chunk):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + chunk]))
        out += struct.pack(">i", len(block)) + block
    return bytes(out)


@pytest.mark.parametrize("chunk", [1000, 32 * 1024, 10**6])
def test_snappy_reads_xerial_framing(chunk: int) -> None:
    assert decompress(SNAPPY, _xerial(SAMPLE, chunk)) == SAMPLE


def test_xerial_header_only_is_empty() -> None:
    assert decompress(SNAPPY, _xerial(b"", 100)) == b""


@pytest.mark.parametrize(
    "damage",
    [
        lambda x: x[:12],  # header cut short
        lambda x: x[:18],  # chunk length cut short
        lambda x: x[:16] + struct.pack(">i", 10**6) + x[20:],  # chunk longer than the data
        lambda x: x[:16] + struct.pack(">i", -1) + x[20:],
        lambda x: x[:20] + b"\xff" * 8 + x[28:],  # garbage snappy block
    ],
)
def test_damaged_xerial_is_a_decode_error(damage: object) -> None:
    framed = _xerial(SAMPLE, 1000)
    with pytest.raises(DecodeError):
        decompress(SNAPPY, damage(framed))  # type: ignore[operator]


def test_lz4_writes_frames_with_independent_blocks() -> None:
    packed = compress(LZ4, SAMPLE * 10)  # several 64 KiB blocks
    assert packed[:4] == b"\x04\x22\x4d\x18"
    flags = packed[4]
    assert flags >> 6 == 1  # frame format version 1
    assert flags & 0x20  # block independence: Java's KafkaLZ4BlockInputStream requires it
    assert not flags & 0x04  # no content checksum
    assert (packed[5] >> 4) & 7 == 4  # 64 KiB maximum block size, as Java writes
    assert bytes(cramjam.lz4.decompress(packed)) == SAMPLE * 10


def _xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 of fewer than 4 bytes (the lz4 frame's header checksum), from its specification."""
    p1, p2, p3, p5 = 2654435761, 2246822519, 3266489917, 374761393  # (no 4-byte lane: P4 unused)
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    h = (seed + p5 + len(data)) & mask
    for byte in data:
        h = rotl((h + byte * p5) & mask, 11) * p1 & mask
    h ^= h >> 15
    h = h * p2 & mask
    h ^= h >> 13
    h = h * p3 & mask
    return h ^ (h >> 16)


def test_lz4_frame_header_checksum_is_xxh32_of_the_descriptor() -> None:
    packed = compress(LZ4, SAMPLE)
    assert packed[6] == (_xxh32(packed[4:6]) >> 8) & 0xFF
    assert _xxh32(b"") == 0x02CC5D05  # the specification's check value of the empty input


def test_lz4_blocks_that_would_not_shrink_are_stored() -> None:
    """Random bytes: each 64 KiB block is stored as it is (the size's top bit), readable by lz4."""
    data = random.Random(5).randbytes(150_000)
    packed = compress(LZ4, data)
    sizes, at = [], 7
    while (size := int.from_bytes(packed[at : at + 4], "little")) != 0:
        sizes.append(size)
        at += 4 + (size & 0x7FFFFFFF)
    assert sizes == [0x80000000 | 65536, 0x80000000 | 65536, 0x80000000 | (150_000 - 131072)]
    assert packed[at:] == b"\x00\x00\x00\x00" and bytes(cramjam.lz4.decompress(packed)) == data


@pytest.mark.parametrize("codec", CODECS)
def test_size_limit_exact_fit_passes(codec: int) -> None:
    assert decompress(codec, compress(codec, SAMPLE), max_size=len(SAMPLE)) == SAMPLE


@pytest.mark.parametrize("codec", CODECS)
def test_size_limit_one_byte_short_fails(codec: int) -> None:
    with pytest.raises(DecompressedSizeError, match=str(len(SAMPLE) - 1)):
        decompress(codec, compress(codec, SAMPLE), max_size=len(SAMPLE) - 1)


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_bomb_stops_at_limit(codec: int) -> None:
    bomb = compress(codec, bytes(64 * 1024 * 1024))
    with pytest.raises(DecompressedSizeError):
        decompress(codec, bomb, max_size=1024 * 1024)


def test_xerial_limit_counts_all_chunks() -> None:
    framed = _xerial(SAMPLE, 1000)
    with pytest.raises(DecompressedSizeError):
        decompress(SNAPPY, framed, max_size=len(SAMPLE) - 1)


def test_large_ratio_within_limit_grows_the_buffer() -> None:
    data = bytes(5 * 1024 * 1024)
    for codec in (GZIP, LZ4, ZSTD):
        assert decompress(codec, compress(codec, data), max_size=len(data)) == data


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_garbage_is_a_decode_error(codec: int) -> None:
    packed = compress(codec, SAMPLE)
    for bad in (b"", b"\x00" * 50, packed[: len(packed) // 2], packed[:6] + b"\xff" * 40):
        with pytest.raises(DecodeError):
            decompress(codec, bad)


@settings(max_examples=200, deadline=None)
@given(codec=st.sampled_from(CODECS), data=st.binary(max_size=200))
def test_random_input_raises_only_decode_error(codec: int, data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decompress(codec, data, max_size=1 << 20)


def test_corrupt_gzip_body_is_reported_as_corrupt_not_too_large() -> None:
    packed = bytearray(compress(GZIP, SAMPLE))
    packed[20:30] = b"\xff" * 10
    with pytest.raises(DecodeError) as info:
        decompress(GZIP, bytes(packed))
    assert not isinstance(info.value, DecompressedSizeError)
