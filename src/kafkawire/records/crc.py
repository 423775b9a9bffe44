"""The two checksums Kafka puts on records.

RecordBatch v2 uses CRC-32C (Castagnoli), computed by the ``crc32c`` package's C/SSE4.2 code
because the producer checksums every batch it sends; imported at the first checksum, since
importing it loads ``importlib.metadata`` and ``argparse`` for its command line (20 ms of every
``import kafkawire``). Legacy messages (magic 0 and 1) use the IEEE CRC-32 that ``zlib`` provides.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

Buffer = bytes | bytearray | memoryview

_crc32c: Callable[[Buffer], int] | None = None


def crc32c(data: Buffer) -> int:
    """CRC-32C as an unsigned 32-bit int (RecordBatch v2)."""
    global _crc32c
    if _crc32c is None:
        import crc32c as package

        _crc32c = package.crc32c
    return _crc32c(data)


def crc32(data: Buffer) -> int:
    """CRC-32 (IEEE) as an unsigned 32-bit int (MessageSet v0/v1)."""
    return zlib.crc32(data)
