"""Host name resolution off the IO thread.

``getaddrinfo`` can block for seconds (a slow DNS server) and can raise more than OSError (a name
with an empty label or a label over 63 characters raises UnicodeError from the IDNA codec), so it
runs on one worker thread per resolver, started on first use and ended by `close()`; its answer
is posted back to the IO thread with the engine's ``call_soon``. Numeric addresses (every test,
most deployments' bootstrap lists) are answered at once without the worker. Answers are kept for
``broker.address.ttl`` (a reconnect storm asks the DNS server once), limited to one address family
by ``broker.address.family``.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

Addresses = list[tuple[int, Any]]  # (family, sockaddr) in getaddrinfo's order
Done = Callable[[Addresses | None, str | None], None]  # (addresses, None) or (None, reason)

# broker.address.family -> getaddrinfo's family
FAMILIES = {"any": socket.AF_UNSPEC, "v4": socket.AF_INET, "v6": socket.AF_INET6}


def lookup(host: str, port: int, family: int = socket.AF_UNSPEC) -> tuple[Addresses | None, str | None]:
    """getaddrinfo with every failure as a reason, never an exception."""
    try:
        infos = socket.getaddrinfo(host, port, family, type=socket.SOCK_STREAM)
    except Exception as exc:  # OSError, UnicodeError (IDNA), anything else the resolver raises
        return None, f"{type(exc).__name__}: {exc}"
    if not infos:
        return None, "no address"
    return [(family, address) for family, _type, _proto, _name, address in infos], None


def canonical_names(host: str, port: int, family: int = socket.AF_UNSPEC) -> list[str]:
    """``client.dns.lookup=resolve_canonical_bootstrap_servers_only``: the canonical name of each of
    ``host``'s addresses (its reverse lookup; the address itself when it has none), in order and
    without repeats, as librdkafka and the Java client expand a bootstrap server when the client is
    made. A name that does not resolve stays as it is (its connection then says why)."""
    addresses, _reason = lookup(host, port, family)
    if addresses is None:
        return [host]
    names: list[str] = []
    for _family, address in addresses:
        try:
            name = socket.getnameinfo(address, socket.NI_NAMEREQD)[0]
        except (OSError, UnicodeError):
            name = address[0]
        if name not in names:
            names.append(name)
    return names


def _numeric(host: str) -> bool:
    import ipaddress  # (here: building its network constants is a cost every import would pay)

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


Key = tuple[str, int, int]  # host, port, family


class Resolver:
    def __init__(self, post: Callable[[Callable[[], None]], None]) -> None:
        self._post = post  # runs a function on the IO thread
        self._jobs: queue.SimpleQueue[tuple[Key, float, Done] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._kept: dict[Key, tuple[float, Addresses]] = {}  # answers until their monotonic expiry

    def resolve(self, host: str, port: int, done: Done, *, family: int = socket.AF_UNSPEC, ttl: float = 0.0) -> None:
        """Call ``done`` on the IO thread with the addresses of ``host:port`` (of ``family`` only,
        unless AF_UNSPEC) or why there are none; a name's addresses are kept ``ttl`` seconds."""
        key = (host, port, family)
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and time.monotonic() < kept[0]:
            self._post(lambda: done(kept[1], None))
            return
        if _numeric(host):
            addresses, reason = lookup(host, port, family)
            self._post(lambda: done(addresses, reason))
            return
        with self._lock:
            if self._closed:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="kafkawire-resolve", daemon=True)
                self._thread.start()
        self._jobs.put((key, ttl, done))

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
            (host, port, family), ttl, done = job
            addresses, reason = lookup(host, port, family)
            if self._closed:
                return
            if addresses is not None and ttl > 0:
                with self._lock:
                    self._kept[(host, port, family)] = (time.monotonic() + ttl, addresses)
            self._post(lambda d=done, a=addresses, r=reason: d(a, r))  # type: ignore[misc]
