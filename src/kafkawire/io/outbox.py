"""A connection's frames waiting for the socket, written with gathering writes.

Each frame is queued as its `Frame.pieces`: views of its own bytes and of the record batches it
references, so a Produce request's batches go from the producer's buffers to the kernel with no
copy in between. One `write` hands the transport many views at once (one ``sendmsg``), takes off
what it wrote, and keeps a view of the rest, which keeps its buffer alive until it is written.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..protocol.frame import Frame
from .transport import Transport

# A gathering write offers views until it holds this many (Linux's IOV_MAX is 1024) or this many
# bytes: more than a socket buffer takes at once is pointless, and TLS seals all it is offered.
GATHER = 64
GATHER_BYTES = 1 << 20

OnWritten = Callable[[], None]


class Outbox:
    def __init__(self) -> None:
        # A frame's last view carries its callback, or _NOTHING_TO_CALL: so that frames are counted.
        self._views: deque[tuple[memoryview, OnWritten | None]] = deque()
        self.frames = 0  # frames not wholly written yet

    def __bool__(self) -> bool:
        return bool(self._views)

    def add(self, frame: Frame, on_written: OnWritten | None) -> None:
        """Queue ``frame``; ``on_written`` runs once its last byte is taken by the transport."""
        pieces = frame.pieces()
        views = self._views
        for piece in pieces[:-1]:
            views.append((piece, None))
        views.append((pieces[-1], _NOTHING_TO_CALL if on_written is None else on_written))
        self.frames += 1

    def write(self, transport: Transport) -> list[OnWritten]:
        """Write what the transport takes now; the callbacks of the frames it finished, in order."""
        views = self._views
        done: list[OnWritten] = []
        while views:
            batch: list[memoryview] = []
            size = 0
            for view, _ in views:
                batch.append(view)
                size += len(view)
                if size >= GATHER_BYTES or len(batch) == GATHER:
                    break
            sent = transport.send_many(batch)
            whole = sent == size
            while sent:
                view, on_written = views[0]
                if sent < len(view):
                    views[0] = (view[sent:], on_written)
                    break
                sent -= len(view)
                views.popleft()
                if on_written is not None:
                    self.frames -= 1
                    if on_written is not _NOTHING_TO_CALL:
                        done.append(on_written)
            if not whole:
                break
        return done

    def clear(self) -> None:
        self._views.clear()
        self.frames = 0


def _NOTHING_TO_CALL() -> None:
    """The mark of a frame's last view when the frame has no callback."""
