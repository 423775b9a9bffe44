"""A request as it goes on the wire: its own bytes, with large `records` values held in place.

The codec writes a request into a `Frame` as into any bytearray, except that a `records` value of
`SPLICE_MIN` bytes or more is not copied in: the frame keeps a reference to it and where it
belongs (`refer`). `pieces` hands the whole frame to a vectored write (``sendmsg``), so a Produce
request's record batches reach the socket from the producer's own batch buffers.
"""

from __future__ import annotations

from .values import Buffer

# A records value shorter than this is copied into the frame: a copy of a few KiB costs less than
# one more piece to carry through the write queue and the kernel's iovec.
SPLICE_MIN = 4096


class Frame(bytearray):
    """The frame's own bytes, plus buffers referenced at positions of them (`refs`); `size` is
    the whole frame's length. A referenced buffer must not change until the frame is written."""

    __slots__ = ("referenced", "refs")

    def __init__(self, data: Buffer | int = 0) -> None:
        bytearray.__init__(self, data)  # (not super(): a Frame is made for every request)
        self.refs: list[tuple[int, Buffer]] = []  # (position in these bytes, buffer placed there)
        self.referenced = 0  # bytes of the frame held by reference

    def refer(self, data: Buffer) -> None:
        """Place ``data`` here, at the current end, without copying it."""
        self.refs.append((len(self), data))
        self.referenced += len(data)

    @property
    def size(self) -> int:
        return len(self) + self.referenced

    def pieces(self) -> list[memoryview]:
        """The frame as consecutive views, none empty: its own bytes split around the referenced buffers."""
        own = memoryview(self)
        if not self.refs:
            return [own]
        out: list[memoryview] = []
        start = 0
        for pos, data in self.refs:
            if pos > start:
                out.append(own[start:pos])
            if len(data):
                out.append(memoryview(data))
            start = pos
        if start < len(self):
            out.append(own[start:])
        return out

    def joined(self) -> bytes:
        """The whole frame in one buffer (for tools and tests; the IO path writes `pieces`)."""
        return b"".join(self.pieces())
