"""The two checksums Kafka puts on records.

RecordBatch v2 uses CRC-32C (Castagnoli), computed by the ``crc32c`` package's C/SSE4.2 code
because the producer checksums every batch it sends. Legacy messages (magic 0 and 1) use the
IEEE CRC-32 that ``zlib`` already provides.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c

Buffer = bytes | bytearray | memoryview


def crc32c(data: Buffer) -> int:
    """CRC-32C as an unsigned 32-bit int (RecordBatch v2)."""
    return _crc32c.crc32c(data)


def crc32(data: Buffer) -> int:
    """CRC-32 (IEEE) as an unsigned 32-bit int (MessageSet v0/v1)."""
    return zlib.crc32(data)
