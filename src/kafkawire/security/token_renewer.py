"""One bearer token at a time, renewed once REFRESH_AT of its lifetime has passed (`core/renewal.py`).

The one renewer of every token source: oauth_cb's and the unsecured test JWTs (`security.py`), OIDC's
(`oidc.py`) and the Schema Registry's bearer sources (`schema_registry/common/auth.py`). ``fetch(now)``
returns ``(token, expiry)`` on the clock ``now`` comes from (`from_lifetime` adapts a fetch that
answers a lifetime). Callers ask in one of three ways:

- `current`: in the caller's thread, which fetches when the token is due (the registry's requests;
  a connection whose oauth_cb token expired while renewals failed);
- `current_or_fetch_aside`: never blocks: the token, or None while a worker thread fetches it (a
  connection on the IO thread waiting for an OIDC token);
- `renew_ahead`: a thread of its own fetches at each renewal time (oauth_cb: user code that may block).

The tokens stay in here: nothing logged, no repr.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from ..core.renewal import renewal_due, renewal_time

T = TypeVar("T")


def from_lifetime(fetch: Callable[[], tuple[T, float]]) -> Callable[[float], tuple[T, float]]:
    """A fetch answering (token, lifetime in seconds) as one answering (token, expiry): ``now`` + lifetime."""

    def expiring(now: float) -> tuple[T, float]:
        value, lifetime = fetch()
        return value, now + lifetime

    return expiring


class _Held(Generic[T]):
    __slots__ = ("expires", "renew_at", "value")

    def __init__(self, value: T, renew_at: float, expires: float) -> None:
        self.value = value
        self.renew_at = renew_at
        self.expires = expires


class TokenRenewer(Generic[T]):
    def __init__(
        self,
        fetch: Callable[[float], tuple[T, float]],
        name: str = "kafkawire-token",
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``name``: the threads' name; ``clock``: what the threads read ``now`` from."""
        self._fetch = fetch
        self._name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._held: _Held[T] | None = None
        self._fetching = False  # a worker of current_or_fetch_aside is under way
        self._failure: Exception | None = None  # why that worker's fetch failed, until a caller hears it
        self._waiting: list[Callable[[], None]] = []
        self._ahead: threading.Thread | None = None
        self._closing = threading.Event()

    def _obtain(self, now: float) -> _Held[T]:
        value, expires = self._fetch(now)
        return _Held(value, renewal_time(now, expires), expires)

    def current(self, now: float) -> T:
        """The token; fetched here first (raising what ``fetch`` raises) when there is none or it is due."""
        with self._lock:
            held = self._held
            if held is None or renewal_due(now, held.renew_at, held.expires, self._ahead is not None):
                held = self._held = self._obtain(now)
            return held.value

    def current_or_fetch_aside(self, now: float, on_ready: Callable[[], None]) -> T | None:
        """The token, or None: it is due, a worker thread fetches it and calls ``on_ready()`` when done.

        A failed fetch is raised once, to the next caller, unless the token in hand has not expired
        yet (that caller gets it instead); the caller after that starts a new fetch."""
        with self._lock:
            held = self._held
            if held is not None and not renewal_due(now, held.renew_at, held.expires, False):
                return held.value
            failure = self._failure
            if failure is not None and not self._fetching:
                self._failure = None
                if held is not None and now < held.expires:
                    return held.value
                raise failure
            self._waiting.append(on_ready)
            if not self._fetching:
                self._fetching = True
                threading.Thread(target=self._fetch_aside, name=self._name, daemon=True).start()
            return None

    def _fetch_aside(self) -> None:
        held: _Held[T] | None = None
        failure: Exception | None = None
        try:
            held = self._obtain(self._clock())
        except Exception as exc:  # kept for the next caller of current_or_fetch_aside
            failure = exc
        with self._lock:
            self._fetching = False
            if held is not None:
                self._held, self._failure = held, None
            else:
                self._failure = failure
            waiting, self._waiting = self._waiting, []
        for on_ready in waiting:
            on_ready()

    def renew_ahead(self, on_failure: Callable[[Exception], None], retry_after: float) -> None:
        """From now on a thread renews the token at each renewal time; callers of `current` keep it
        until it expires. A failed fetch goes to ``on_failure`` (on that thread), and is tried again
        ``retry_after`` seconds later."""
        self._ahead = threading.Thread(target=self._renew, args=(on_failure, retry_after), name=self._name, daemon=True)
        self._ahead.start()

    def _renew(self, on_failure: Callable[[Exception], None], retry_after: float) -> None:
        held = self._held
        wake = self._clock() if held is None else held.renew_at
        while not self._closing.wait(max(0.0, wake - self._clock())):
            now = self._clock()
            try:
                held = self._obtain(now)
            except Exception as exc:  # the token in hand stays in use; said to on_failure
                on_failure(exc)
                wake = now + retry_after
                continue
            with self._lock:
                self._held = held
            wake = held.renew_at

    def close(self) -> None:
        """Stop renewing ahead (after a fetch under way ends)."""
        self._closing.set()
        thread = self._ahead
        if thread is not None and thread is not threading.current_thread():
            thread.join()
