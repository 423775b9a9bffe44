"""Clients dropped without close() are finished, as confluent-kafka destroys its handle (issue 39).

Each face registers `when_dropped`: once it is collected (nothing below a face refers to it, or
it never would be: tests/broker/test_dropped_clients.py) its client closes its connections and
its IO thread stops. The collector runs finalizers on whatever thread it runs, the IO thread
included and maybe inside a lock it holds, so the steps are handed to the IO thread and nobody
waits for them. Records still queued are lost, and said to be on the ``kafkawire`` logger.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable

from .network_client import Client

log = logging.getLogger("kafkawire")


def when_dropped(
    face: object, client: Client, *steps: Callable[[], None], lost: Callable[[], int] | None = None
) -> None:
    """Finish ``client`` once ``face`` is collected unclosed: ``steps`` (the face's own, such as
    stopping a report thread) then the client's shutdown, on the IO thread. ``lost``: how many
    records the face still held. (A client closed meanwhile is left alone.)

    Not at interpreter exit: a face alive then was never closed, not dropped, and its own at-exit
    handler says so. Run there too, this one warned first, a second time, and raced that handler
    by closing the client on the IO thread."""
    weakref.finalize(face, _finish, type(face).__name__, client, steps, lost).atexit = False


def _finish(kind: str, client: Client, steps: tuple[Callable[[], None], ...], lost: Callable[[], int] | None) -> None:
    if client.closed:
        return
    held = lost() if lost is not None else 0
    if held:
        log.warning(
            "a %s was dropped without close(): %d record(s) still queued or in flight are lost "
            "(call flush() or close() before dropping it)",
            kind,
            held,
        )
    client.abandon(steps)
