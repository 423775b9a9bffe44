"""The two checksums Kafka puts on records.

RecordBatch v2 uses CRC-32C (Castagnoli): the C extension's (native_c/crc32c.c) where it was
built, else, as its pure-Python twin, the ``crc32c`` package's C/SSE4.2 code, imported at the
first checksum since importing it loads ``importlib.metadata``, ``email`` and ``argparse``.
Legacy messages (magic 0 and 1) use the IEEE CRC-32 that ``zlib`` provides.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable

from kafkawire.native import native

Buffer = bytes | bytearray | memoryview

_crc32c: Callable[[Buffer], int] | None = None if native is None else native.crc32c


def _first_crc32c(data: Buffer) -> int:
    """CRC-32C as an unsigned 32-bit int (RecordBatch v2), importing the package on first use."""
    return (_crc32c or load())(data)


# CRC-32C as an unsigned 32-bit int (RecordBatch v2): the extension's function itself when built
# (a batch's checksum is then one call, not two).
crc32c: Callable[[Buffer], int] = _first_crc32c if _crc32c is None else _crc32c


def load() -> Callable[[Buffer], int]:
    """The CRC-32C function, imported now if it was not yet. A producer calls this when it is
    made, on the application's thread: imported on the IO thread at the first batch, while the
    application produces in a loop, the import waited for the GIL at each file it read, and the
    first batch left some 40 ms late."""
    global _crc32c
    if _crc32c is None:
        import crc32c as package

        # Never let the GIL go: a 1 MB batch takes 30 us (SSE4.2), while waiting for the GIL again
        # takes up to the switch interval (5 ms) when the application's thread is producing.
        _crc32c = functools.partial(package.crc32c, gil_release_mode=0)
    return _crc32c


def crc32(data: Buffer) -> int:
    """CRC-32 (IEEE) as an unsigned 32-bit int (MessageSet v0/v1)."""
    return zlib.crc32(data)
