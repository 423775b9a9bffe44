"""MessageSet v0/v1: golden bytes, round trips, kafka-python as judge, KAFKA-3160 lz4 framing."""

from __future__ import annotations

import contextlib
import struct
import zlib

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder  # type: ignore[import-untyped]
from kafka.record.memory_records import MemoryRecords  # type: ignore[import-untyped]

from kafkawire.records import (
    GZIP,
    LOG_APPEND_TIME,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    CorruptRecordError,
    DecodeError,
    DecompressedSizeError,
    Record,
    compress,
    decode_batches,
    encode_message_set,
)
from kafkawire.records.legacy import _set_lz4_header_checksum, _xxh32_short

LEGACY_CODECS = [NONE, GZIP, SNAPPY, LZ4]
T0 = 1_700_000_000_000
Rec = tuple[int, "bytes | None", "bytes | None"]


def _message(offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None) -> bytes:
    """One message laid out from the grammar by hand."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def _kafka_python(magic: int, records: list[Rec], compression: int = NONE) -> bytes:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=compression, batch_size=1 << 30)
    for offset, (timestamp, key, value) in enumerate(records):
        assert builder.append(offset, timestamp, key, value) is not None
    return bytes(builder.build())


def _judge(data: bytes) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """What kafka-python reads from a message set."""
    records = MemoryRecords(data)
    out = []
    while (batch := records.next_batch()) is not None:
        # kafka-python reports a v0 message's missing timestamp as None, Kafka's constant is -1.
        out += [(r.offset, -1 if r.timestamp is None else r.timestamp, r.key, r.value) for r in batch]
    return out


def _fix_crc(message: bytearray, start: int = 0) -> bytearray:
    struct.pack_into(">I", message, start + 12, zlib.crc32(bytes(message[start + 16 :])))
    return message


RECORDS: list[Rec] = [(T0, b"k", b"v1"), (T0 + 5, None, b""), (T0 + 2, b"", None)]


@pytest.mark.parametrize("magic", [0, 1])
def test_golden_uncompressed(magic: int) -> None:
    expected = b"".join(
        _message(i, magic, 0, timestamp, key, value) for i, (timestamp, key, value) in enumerate(RECORDS)
    )
    ours = encode_message_set(magic, RECORDS)
    assert ours == expected
    assert ours == _kafka_python(magic, RECORDS)


def test_golden_v1_message_literal() -> None:
    # A v1 message with key b"a", value b"b" at timestamp 1, spelled out field by field.
    body = bytes.fromhex(
        "01"  # magic
        "00"  # attributes
        "0000000000000001"  # timestamp
        "00000001"  # key length
        "61"  # key
        "00000001"  # value length
        "62"  # value
    )
    size = 4 + len(body)  # crc + body
    expected = struct.pack(">qiI", 0, size, zlib.crc32(body)) + body
    assert size == 0x18
    assert encode_message_set(1, [(1, b"a", b"b")]) == expected


@pytest.mark.parametrize("magic", [0, 1])
def test_decode_uncompressed(magic: int) -> None:
    batches = decode_batches(encode_message_set(magic, RECORDS))
    assert len(batches) == 3  # one "batch" per top-level message
    expected_ts = [r[0] if magic == 1 else -1 for r in RECORDS]
    assert [b.records for b in batches] == [
        [Record(i, expected_ts[i], key, value, [])] for i, (_ts, key, value) in enumerate(RECORDS)
    ]
    for batch in batches:
        assert batch.magic == magic
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, -1, -1)
        assert batch.compression == NONE and not batch.is_control and not batch.is_transactional


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_compressed_wrapper_round_trip(magic: int, codec: int) -> None:
    data = encode_message_set(magic, RECORDS, codec)
    batches = decode_batches(data)
    if codec == NONE:
        assert len(batches) == 3
        return
    (batch,) = batches
    assert batch.compression == codec and batch.magic == magic
    assert [r.offset for r in batch.records] == [0, 1, 2]
    assert batch.last_offset_delta == 2
    assert [(r.key, r.value) for r in batch.records] == [(k, v) for _t, k, v in RECORDS]
    if magic == 1:
        assert [r.timestamp for r in batch.records] == [t for t, _k, _v in RECORDS]
        assert batch.max_timestamp == T0 + 5  # the wrapper carries the largest timestamp


@pytest.mark.parametrize("magic", [0, 1])
def test_wrapper_layout(magic: int) -> None:
    data = encode_message_set(magic, RECORDS, GZIP)
    offset, size, _crc, got_magic, attributes = struct.unpack_from(">qiIbb", data)
    assert (offset, got_magic, attributes) == (2, magic, GZIP)  # wrapper offset = last inner offset
    assert size == len(data) - 12


@settings(max_examples=80, deadline=None)
@given(
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    records=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=1 << 45),
            st.one_of(st.none(), st.binary(max_size=30)),
            st.one_of(st.none(), st.binary(max_size=100)),
        ),
        min_size=1,
        max_size=15,
    ),
)
def test_round_trip(magic: int, codec: int, records: list[Rec]) -> None:
    decoded = [r for b in decode_batches(encode_message_set(magic, records, codec)) for r in b.records]
    assert decoded == [
        Record(i, timestamp if magic == 1 else -1, key, value, []) for i, (timestamp, key, value) in enumerate(records)
    ]


@settings(max_examples=60, deadline=None)
@given(
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from([NONE, GZIP]),
    records=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=1 << 45),
            st.one_of(st.none(), st.binary(max_size=30)),
            st.one_of(st.none(), st.binary(max_size=100)),
        ),
        min_size=1,
        max_size=15,
    ),
)
def test_kafka_python_agrees_both_ways(magic: int, codec: int, records: list[Rec]) -> None:
    expected = [(i, ts if magic == 1 else -1, key, value) for i, (ts, key, value) in enumerate(records)]
    assert _judge(encode_message_set(magic, records, codec)) == expected

    theirs = decode_batches(_kafka_python(magic, records, codec))
    decoded = [(r.offset, r.timestamp, r.key, r.value) for b in theirs for r in b.records]
    if codec != NONE and magic == 1:
        # kafka-python gives its wrapper offset 0, so the relative inner offsets resolve
        # to 0 - last .. 0; what matters is that they are consecutive.
        shift = len(records) - 1
        decoded = [(offset + shift, ts, key, value) for offset, ts, key, value in decoded]
    assert decoded == expected


def test_log_append_time_wrapper_overrides_inner_timestamps() -> None:
    data = bytearray(encode_message_set(1, RECORDS, GZIP))
    struct.pack_into(">bq", data, 17, GZIP | 0x08, T0 + 999)  # attributes, timestamp
    (batch,) = decode_batches(bytes(_fix_crc(data)))
    assert batch.timestamp_type == LOG_APPEND_TIME
    assert [r.timestamp for r in batch.records] == [T0 + 999] * 3


def test_encode_rejections() -> None:
    with pytest.raises(ValueError, match="magic 0 or 1"):
        encode_message_set(2, RECORDS)
    with pytest.raises(ValueError, match="at least one"):
        encode_message_set(1, [])
    with pytest.raises(ValueError, match="zstd"):
        encode_message_set(1, RECORDS, ZSTD)


# ----------------------------------------------------------------------------- lz4 frame checksum (KAFKA-3160)


def test_xxh32_known_values() -> None:
    assert _xxh32_short(b"") == 0x02CC5D05
    assert _xxh32_short(b"abc") == 0x32D153FF


@pytest.mark.parametrize("level", [0, 9])
def test_xxh32_agrees_with_lz4_frame_checksums(level: int) -> None:
    # lz4 itself writes HC = second byte of xxh32(descriptor): check ours reproduces it.
    for data in (b"", b"x" * 10, bytes(200_000)):
        frame = compress(LZ4, data, level)
        assert (_xxh32_short(frame[4:6]) >> 8) & 0xFF == frame[6]
        compressor = cramjam.lz4.Compressor(level=level, content_checksum=True, block_linked=True)
        compressor.compress(data)
        other = bytes(compressor.finish())
        assert (_xxh32_short(other[4:6]) >> 8) & 0xFF == other[6]


def test_magic0_lz4_writes_the_broken_header_checksum_and_reads_it() -> None:
    data = encode_message_set(0, RECORDS, LZ4)
    frame = data[12 + 4 + 1 + 1 + 4 + 4 :]  # after offset, size, crc, magic, attributes, null key, value length
    assert frame[:4] == b"\x04\x22\x4d\x18"
    assert frame[6] == (_xxh32_short(frame[:6]) >> 8) & 0xFF  # hashed from the frame magic on
    assert frame[6] != (_xxh32_short(frame[4:6]) >> 8) & 0xFF
    with pytest.raises(cramjam.DecompressionError, match=r"[Cc]hecksum"):  # a strict lz4 reader rejects it
        bytes(cramjam.lz4.decompress(frame))
    (batch,) = decode_batches(data)
    assert [(r.key, r.value) for r in batch.records] == [(k, v) for _t, k, v in RECORDS]


def test_magic0_lz4_with_a_correct_checksum_also_reads() -> None:
    inner = encode_message_set(0, RECORDS)
    wrapper = _message(2, 0, LZ4, -1, None, compress(LZ4, inner))
    (batch,) = decode_batches(wrapper)
    assert len(batch.records) == 3


def test_magic1_lz4_header_checksum_is_correct() -> None:
    data = encode_message_set(1, RECORDS, LZ4)
    frame = data[12 + 4 + 1 + 1 + 8 + 4 + 4 :]
    assert bytes(cramjam.lz4.decompress(frame)) == encode_message_set(1, RECORDS)


def test_lz4_header_repair_handles_content_size_and_truncation() -> None:
    # FLG with the content-size bit: the descriptor is 10 bytes and HC moves to byte 14.
    frame = b"\x04\x22\x4d\x18" + bytes([0x68, 0x40]) + bytes(8) + b"\x00" + b"rest"
    fixed = _set_lz4_header_checksum(frame, broken=False)
    assert fixed[14] == (_xxh32_short(frame[4:14]) >> 8) & 0xFF
    assert fixed[:14] == frame[:14] and fixed[15:] == b"rest"
    for short in (frame[:5], frame[:14]):
        with pytest.raises(DecodeError):
            _set_lz4_header_checksum(short, broken=False)


# ----------------------------------------------------------------------------- corruption and hostile input


def test_crc_mismatch() -> None:
    data = bytearray(encode_message_set(1, RECORDS))
    data[25] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC-32"):
        decode_batches(bytes(data))


def test_inner_crc_mismatch() -> None:
    inner = bytearray(encode_message_set(1, RECORDS))
    inner[-1] ^= 0xFF
    wrapper = _message(2, 1, GZIP, T0, None, compress(GZIP, bytes(inner)))
    with pytest.raises(CorruptRecordError):
        decode_batches(wrapper)


@pytest.mark.parametrize(
    ("inner", "message"),
    [
        (b"", "no inner messages"),
        (encode_message_set(1, RECORDS, GZIP), "nested compression"),
        (encode_message_set(0, RECORDS), "magic 0 message inside a magic 1"),
        (encode_message_set(1, RECORDS)[:-3], "overruns"),
        (encode_message_set(1, RECORDS) + b"\x00" * 5, "truncated"),
    ],
)
def test_bad_wrapper_contents(inner: bytes, message: str) -> None:
    wrapper = _message(0, 1, GZIP, T0, None, compress(GZIP, inner))
    with pytest.raises(DecodeError, match=message):
        decode_batches(wrapper)


def test_wrapper_with_null_value() -> None:
    with pytest.raises(DecodeError, match="null value"):
        decode_batches(_message(0, 1, GZIP, T0, None, None))


def test_wrapper_bomb() -> None:
    wrapper = _message(0, 1, GZIP, T0, None, compress(GZIP, bytes(8 * 1024 * 1024)))
    with pytest.raises(DecompressedSizeError):
        decode_batches(wrapper, max_decompressed_size=1024 * 1024)


@pytest.mark.parametrize(
    ("message", "error"),
    [
        (_message(0, 1, 0, T0, b"k", b"v")[:-1], None),  # trailing partial message: ignored
        (struct.pack(">qiIbb", 0, 6, 0, 1, 0), "too short"),
        (struct.pack(">qiIbb", 0, 14, 0, 1, 0) + bytes(8), "too short"),
    ],
)
def test_structural(message: bytes, error: str | None) -> None:
    if error is None:
        assert decode_batches(message) == []
    else:
        with pytest.raises(DecodeError, match=error):
            decode_batches(message)


def test_lengths_overrunning_the_message() -> None:
    for key_length in (100, -2):
        message = bytearray(_message(0, 0, 0, -1, b"key", b"value"))
        struct.pack_into(">i", message, 18, key_length)
        with pytest.raises(DecodeError):
            decode_batches(bytes(_fix_crc(message)))
    message = bytearray(_message(0, 0, 0, -1, b"key", b"value") + b"xx")
    struct.pack_into(">i", message, 8, len(message) - 12)
    with pytest.raises(DecodeError, match="stray"):
        decode_batches(bytes(_fix_crc(message)))


@settings(max_examples=300, deadline=None)
@given(
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    edits=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1, max_size=4
    ),
)
def test_mutated_messages_with_fixed_crc_raise_only_decode_error(
    magic: int, codec: int, edits: list[tuple[int, int]]
) -> None:
    data = bytearray(encode_message_set(magic, RECORDS, codec))
    first_size = 12 + struct.unpack_from(">i", data, 8)[0]
    for position, byte in edits:
        data[16 + position % (first_size - 16)] = byte  # damage the first message after its CRC
    with contextlib.suppress(DecodeError):
        decode_batches(bytes(_fix_crc(data)))
