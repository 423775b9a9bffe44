"""Backoff for reconnects and retries: exponential with jitter, a pure function so it is testable."""

from __future__ import annotations


def backoff_delay(attempt: int, base_ms: int, max_ms: int, jitter: float) -> float:
    """Seconds to wait before attempt number ``attempt`` (0 = the first retry).

    The delay doubles each attempt from ``base_ms`` up to ``max_ms``; ``jitter`` in [0, 1) spreads
    it over -20%..+20% so that many clients do not retry in lockstep after a broker restart.
    """
    if attempt < 0:
        raise ValueError("attempt must be >= 0")
    raw = float(min(base_ms * (2 ** min(attempt, 32)), max_ms))
    return max(0.0, raw * (0.8 + 0.4 * jitter)) / 1000.0


class RetryBackoff:
    """The delays of retries in a row: ``base_ms`` doubling up to ``max_ms`` (retry.backoff.ms,
    retry.backoff.max.ms), back to ``base_ms`` once something succeeds (`reset`)."""

    def __init__(self, base_ms: int, max_ms: int) -> None:
        self.base_ms = base_ms
        self.max_ms = max_ms
        self.attempts = 0

    def next(self, jitter: float) -> float:
        """Seconds before the next retry (``jitter`` in [0, 1)); each call counts one more."""
        delay = backoff_delay(self.attempts, self.base_ms, self.max_ms, jitter)
        self.attempts += 1
        return delay

    def reset(self) -> None:
        self.attempts = 0
