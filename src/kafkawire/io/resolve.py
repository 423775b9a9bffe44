"""Host name resolution off the IO thread.

``getaddrinfo`` can block for seconds (a slow DNS server) and can raise more than OSError (a name
with an empty label or a label over 63 characters raises UnicodeError from the IDNA codec), so it
runs on one worker thread per resolver, started on first use and ended by `close()`; its answer
is posted back to the IO thread with the engine's ``call_soon``. Numeric addresses (every test,
most deployments' bootstrap lists) are answered at once without the worker.
"""

from __future__ import annotations

import ipaddress
import queue
import socket
import threading
from collections.abc import Callable
from typing import Any

Addresses = list[tuple[int, Any]]  # (family, sockaddr) in getaddrinfo's order
Done = Callable[[Addresses | None, str | None], None]  # (addresses, None) or (None, reason)


def lookup(host: str, port: int) -> tuple[Addresses | None, str | None]:
    """getaddrinfo with every failure as a reason, never an exception."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except Exception as exc:  # OSError, UnicodeError (IDNA), anything else the resolver raises
        return None, f"{type(exc).__name__}: {exc}"
    if not infos:
        return None, "no address"
    return [(family, address) for family, _type, _proto, _name, address in infos], None


def _numeric(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class Resolver:
    def __init__(self, post: Callable[[Callable[[], None]], None]) -> None:
        self._post = post  # runs a function on the IO thread
        self._jobs: queue.SimpleQueue[tuple[str, int, Done] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    def resolve(self, host: str, port: int, done: Done) -> None:
        """Call ``done`` on the IO thread with the addresses of ``host:port`` or why there are none."""
        if _numeric(host):
            addresses, reason = lookup(host, port)
            self._post(lambda: done(addresses, reason))
            return
        with self._lock:
            if self._closed:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="kafkawire-resolve", daemon=True)
                self._thread.start()
        self._jobs.put((host, port, done))

    def close(self) -> None:
        """Stop the worker (after the lookup it is in, if any); answers not yet posted are dropped."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._jobs.put(None)
            if thread is not threading.current_thread():
                thread.join(1.0)  # a lookup stuck in a slow DNS server is left to finish alone

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            host, port, done = job
            addresses, reason = lookup(host, port)
            if self._closed:
                return
            self._post(lambda d=done, a=addresses, r=reason: d(a, r))  # type: ignore[misc]
