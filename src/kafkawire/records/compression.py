"""Batch compression codecs, all backed by cramjam (Rust/C, no per-codec extension to install).

The ids are the ones Kafka stores in bits 0-2 of a batch's (or legacy message's) attributes.
Formats are the ones the Java client and librdkafka exchange:

* gzip: a gzip member (RFC 1952).
* snappy: we write one raw snappy block, as librdkafka does. The Java client writes the
  xerial ``SnappyOutputStream`` framing instead, so reading accepts both.
* lz4: the LZ4 *frame* format with independent blocks; Java's ``KafkaLZ4BlockInputStream``
  decodes each block on its own and rejects linked blocks.
* zstd: a zstd frame.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable

from kafkawire.protocol.primitives import DecodeError
from kafkawire.records.types import DecodeBudgetError

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

# Valid ``compression.level`` values per codec (librdkafka's ranges); -1 means codec default.
LEVEL_RANGES = {GZIP: (0, 9), LZ4: (0, 12), ZSTD: (-131072, 22)}
# What -1 / None resolves to: zlib's and zstd's own defaults, lz4's fast mode (as librdkafka).
DEFAULT_LEVELS = {GZIP: 6, LZ4: 0, ZSTD: 3}

DEFAULT_MAX_DECOMPRESSED_SIZE = 128 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER_SIZE = 16  # magic, int32 version, int32 minimum compatible version
_INT32 = struct.Struct(">i")

# The first decompression attempt gets this many bytes per compressed byte (at least
# _MIN_CAPACITY); each overflow multiplies the buffer by _GROWTH up to max_size.
_RATIO_GUESS = 8
_MIN_CAPACITY = 64 * 1024
_GROWTH = 4
_HINT_BYTES = 18  # enough for a zstd frame header's content size or an lz4 frame descriptor's

Buffer = bytes | bytearray | memoryview
_DecompressInto = Callable[[Buffer, bytearray], int]

# Leading bytes of each framed format; checked first so that garbage fails at once instead of
# after the retries in _bounded. lz4 and zstd frames may also be preceded by skippable frames.
_MAGIC = {GZIP: b"\x1f\x8b", LZ4: b"\x04\x22\x4d\x18", ZSTD: b"\x28\xb5\x2f\xfd"}
_SKIPPABLE_FIRST = frozenset(bytes((b,)) for b in range(0x50, 0x60))
_SKIPPABLE_MAGIC_TAIL = b"\x2a\x4d\x18"


class DecompressedSizeError(DecodeBudgetError):
    """Decompressed data would exceed the caller's ``max_size`` (a likely decompression bomb)."""


def resolve_level(codec: int, level: int | None) -> int | None:
    """Validate a ``compression.level`` for ``codec``; return the concrete level (None: no levels)."""
    if codec not in CODEC_NAMES:
        raise ValueError(f"unknown compression codec id {codec}")
    bounds = LEVEL_RANGES.get(codec)
    if bounds is None:
        if level is not None and level != -1:
            raise ValueError(f"{CODEC_NAMES[codec]} has no compression levels (use -1 or None)")
        return None
    if level is None or level == -1:
        return DEFAULT_LEVELS[codec]
    low, high = bounds
    if not low <= level <= high:
        raise ValueError(f"{CODEC_NAMES[codec]} compression level must be -1 or in [{low}, {high}], got {level}")
    return level


def compress(codec: int, data: Buffer, level: int | None = None) -> bytes:
    """Compress ``data`` with ``codec`` at ``level`` (None or -1: the codec's default)."""
    resolved = resolve_level(codec, level)
    if codec == NONE:
        return bytes(data)
    import cramjam  # (here and below, not at the top: a producer without compression never loads it)

    if codec == GZIP:
        return bytes(cramjam.gzip.compress(data, level=resolved))
    if codec == SNAPPY:
        return bytes(cramjam.snappy.compress_raw(data))
    if codec == LZ4:
        if resolved is None or resolved < _LZ4_HC_MIN:
            return _lz4_frame(memoryview(data))
        # Higher levels (lz4's high-compression mode) only through the streaming compressor: the
        # block call takes no level.
        compressor = cramjam.lz4.Compressor(level=resolved, content_checksum=False, block_linked=False)
        compressor.compress(data if isinstance(data, bytes) else bytes(data))  # it takes only bytes
        return bytes(compressor.finish())
    return bytes(cramjam.zstd.compress(data, level=resolved))


# The lz4 frame written (the LZ4 frame format, lz4's doc/lz4_Frame_format.md), in the order of its bytes:
#   magic            04 22 4D 18
#   FLG              60   version 01, blocks independent, no block checksums, no content size,
#                         no content checksum, no dictionary
#   BD               40   blocks of at most 64 KiB
#   HC               82   (xxh32(FLG BD, seed 0) >> 8) & 0xFF
#   blocks           each: u32 LE size, then that many bytes of one LZ4 block; the size's top bit
#                    set when the block is stored as it is (it would not shrink)
#   end mark         00 00 00 00
# Each block is compressed by its own call, which lets go of the interpreter lock (cramjam's
# streaming lz4 Compressor holds it throughout: the IO thread compressing a megabyte stopped
# produce() for ~2 ms; bench/PROFILE.md "lz4 and the interpreter lock"). Levels 0-2, librdkafka's
# default among them, are lz4's fast mode, as in lz4frame.
_LZ4_HEADER = b"\x04\x22\x4d\x18\x60\x40\x82"
_LZ4_BLOCK = 64 * 1024
_LZ4_STORED = 0x80000000
_LZ4_END = b"\x00\x00\x00\x00"
_U32LE = struct.Struct("<I")
_LZ4_HC_MIN = 3  # lz4frame's LZ4HC_CLEVEL_MIN: levels below it use the fast compressor


def _lz4_frame(data: memoryview) -> bytes:
    """One lz4 frame of ``data`` (see the layout above), blocks compressed in lz4's fast mode."""
    import cramjam

    compress_block = cramjam.lz4.compress_block
    out = bytearray(_LZ4_HEADER)
    for start in range(0, len(data), _LZ4_BLOCK):
        chunk = data[start : start + _LZ4_BLOCK]
        block = compress_block(chunk, store_size=False)
        if len(block) < len(chunk):
            out += _U32LE.pack(len(block))
            out += block
        else:
            out += _U32LE.pack(len(chunk) | _LZ4_STORED)
            out += chunk
    out += _LZ4_END
    return bytes(out)


def decompress(codec: int, data: Buffer, max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE) -> bytearray:
    """Decompress ``data``; raise DecodeError if it is malformed, DecompressedSizeError past ``max_size``.

    The limit holds while decompressing, not after: the output goes into one buffer of at most
    ``max_size`` bytes, allocated at the size the format declares when it declares one, and the
    result is that buffer (a bytearray: converting it to bytes would hold two copies at once).
    """
    if codec == NONE:
        if len(data) > max_size:
            raise DecompressedSizeError(f"{len(data)} bytes exceed the {max_size}-byte limit")
        return bytearray(data)
    if codec == SNAPPY:
        return _snappy_decompress(memoryview(data), max_size)
    import cramjam

    if codec == GZIP:
        return _bounded(GZIP, cramjam.gzip.decompress_into, data, max_size, _gzip_size_hint)
    if codec == LZ4:
        return _bounded(LZ4, cramjam.lz4.decompress_into, data, max_size, _lz4_size_hint)
    if codec == ZSTD:
        return _bounded(ZSTD, cramjam.zstd.decompress_into, data, max_size, _zstd_size_hint)
    raise DecodeError(f"unknown compression codec id {codec}")


def _bounded(
    codec: int, decompress_into: _DecompressInto, data: Buffer, max_size: int, size_hint: Callable[[bytes], int | None]
) -> bytearray:
    """Decompress into one buffer of at most ``max_size`` bytes.

    cramjam's ``decompress_into`` stops as soon as the output buffer is full, so the limit holds
    while decompressing. The buffer starts at the size the frame declares (a hint: a lie only
    costs a retry) or a guess, and a "buffer full" failure retries with a larger one, the old one
    released first: at most one buffer of at most ``max_size`` bytes exists at a time. Any other
    failure is corrupt input, reported at once.
    """
    import cramjam

    name = CODEC_NAMES[codec]
    view = memoryview(data)
    head = bytes(view[:4])
    skippable = codec != GZIP and head[:1] in _SKIPPABLE_FIRST and head[1:] == _SKIPPABLE_MAGIC_TAIL
    if not head.startswith(_MAGIC[codec]) and not skippable:
        raise DecodeError(f"not {name} data (bad magic {head.hex()})")
    hint = size_hint(bytes(view[:_HINT_BYTES]) if codec != GZIP else bytes(view[-4:]))
    guess = max(_MIN_CAPACITY, len(view) * _RATIO_GUESS) if hint is None else hint
    capacity = min(max_size, guess)
    while True:
        out = bytearray(capacity)
        try:
            written = decompress_into(data, out)
        except (cramjam.DecompressionError, OSError, ValueError) as exc:
            if str(exc) != _overflow_message(codec, decompress_into):
                raise DecodeError(f"corrupt {name} data: {exc}") from exc
            if capacity >= max_size:
                raise DecompressedSizeError(f"{name} data decompresses to more than the {max_size}-byte limit") from exc
            del out
            capacity = min(max_size, max(_MIN_CAPACITY, capacity * _GROWTH))
            continue
        del out[written:]
        return out


def _gzip_size_hint(trailer: bytes) -> int | None:
    """A gzip member ends with its uncompressed size modulo 2^32 (ISIZE, little-endian)."""
    return int.from_bytes(trailer, "little") if len(trailer) == 4 else None


def _lz4_size_hint(head: bytes) -> int | None:
    """The content size of an lz4 frame, when its descriptor carries one (FLG bit 3)."""
    if len(head) < 14 or head[:4] != _MAGIC[LZ4] or not head[4] & 0x08:
        return None
    return int.from_bytes(head[6:14], "little")


def _zstd_size_hint(head: bytes) -> int | None:
    """The Frame_Content_Size of a zstd frame, when its header carries one (RFC 8878 3.1.1.1)."""
    if len(head) < 6 or head[:4] != _MAGIC[ZSTD]:
        return None
    descriptor = head[4]
    single_segment = descriptor & 0x20
    size_bytes = (0, 2, 4, 8)[descriptor >> 6] or (1 if single_segment else 0)
    if not size_bytes:
        return None
    start = 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[descriptor & 0x03]
    if len(head) < start + size_bytes:
        return None
    size = int.from_bytes(head[start : start + size_bytes], "little")
    return size + 256 if size_bytes == 2 else size


@functools.cache
def _overflow_message(codec: int, decompress_into: _DecompressInto) -> str:
    """The error text cramjam gives when the output buffer is too small, learnt by provoking it.

    Probed rather than hard-coded so that a rewording in cramjam cannot turn "buffer too
    small" into "corrupt" (which would make large batches unreadable).
    """
    import cramjam

    try:
        decompress_into(compress(codec, bytes(64)), bytearray(1))
    except (cramjam.DecompressionError, OSError, ValueError) as exc:
        return str(exc)
    raise AssertionError(f"cramjam decompressed 64 bytes of {CODEC_NAMES[codec]} into 1 byte")


def _snappy_decompress(view: memoryview, max_size: int) -> bytearray:
    """Raw snappy block or xerial framing. Every block declares its length, so the output is
    allocated once at the sum of those lengths (checked against ``max_size`` first)."""
    import cramjam

    if view[: len(XERIAL_MAGIC)] != XERIAL_MAGIC:
        blocks = [view]
    else:
        if len(view) < _XERIAL_HEADER_SIZE:
            raise DecodeError("truncated xerial snappy header")
        blocks = []
        pos = _XERIAL_HEADER_SIZE
        end = len(view)
        while pos < end:
            if end - pos < 4:
                raise DecodeError("truncated xerial snappy chunk length")
            (size,) = _INT32.unpack_from(view, pos)
            pos += 4
            if size < 0 or size > end - pos:
                raise DecodeError(f"xerial snappy chunk of {size} bytes overruns the data")
            blocks.append(view[pos : pos + size])
            pos += size
    sizes = []
    for block in blocks:
        try:
            sizes.append(cramjam.snappy.decompress_raw_len(block))
        except cramjam.DecompressionError as exc:
            raise DecodeError(f"corrupt snappy data: {exc}") from exc
    total = sum(sizes)
    if total > max_size:
        raise DecompressedSizeError(f"snappy data declares {total} bytes, over the {max_size}-byte limit")
    out = bytearray(total)
    target = memoryview(out)
    pos = 0
    for block, size in zip(blocks, sizes, strict=True):
        try:
            written = cramjam.snappy.decompress_raw_into(block, target[pos : pos + size])
        except (cramjam.DecompressionError, OSError, ValueError) as exc:
            raise DecodeError(f"corrupt snappy data: {exc}") from exc
        if written != size:
            raise DecodeError(f"snappy data declared {size} bytes but held {written}")
        pos += size
    target.release()
    return out
