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
