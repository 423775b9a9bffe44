"""CRC-32C in the C extension (native_c/crc32c.c) against its twin, the crc32c package: every
length around the three-stream blocks' edges, every alignment, starting values, and the check value
of the CRC catalogue. Without the extension, the twin alone against the check value."""

from __future__ import annotations

import random

import crc32c as package
import pytest

from kafkawire.native import native
from kafkawire.records import crc

CHECK = 0xE3069283  # CRC-32C of b"123456789"
EDGES = (256, 768, 8192, 3 * 8192, 3 * 8192 + 3 * 256)


def lengths() -> list[int]:
    near_edges = {edge + d for edge in EDGES for d in (-9, -8, -1, 0, 1, 7, 8, 9)}
    return sorted({*range(0, 70), *near_edges, 1 << 20, 5 * 3 * 8192 + 2 * 3 * 256 + 17})


def test_the_check_value() -> None:
    assert crc.crc32c(b"123456789") == CHECK
    assert crc.crc32c(b"") == 0


needs_native = pytest.mark.skipif(native is None, reason="the C extension is not built")


@needs_native
@pytest.mark.parametrize("length", lengths())
def test_native_equals_the_twin(length: int) -> None:
    rng = random.Random(length)
    data = rng.randbytes(length + 8)
    for start in range(8):  # every alignment of the first byte
        view = memoryview(data)[start : start + length]
        assert native.crc32c(view) == package.crc32c(view)
        value = rng.getrandbits(32)
        assert native.crc32c(view, value) == package.crc32c(view, value)


@needs_native
def test_native_continues_a_checksum() -> None:
    data = random.Random(7).randbytes(100_000)
    assert native.crc32c(data[40_000:], native.crc32c(data[:40_000])) == native.crc32c(data)


@needs_native
def test_native_takes_any_buffer_and_refuses_the_rest() -> None:
    data = b"123456789"
    assert native.crc32c(bytearray(data)) == native.crc32c(memoryview(data)) == CHECK
    with pytest.raises(TypeError):
        native.crc32c("123456789")
