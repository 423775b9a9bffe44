"""TokenRenewer, the one renewer of bearer tokens (oauth_cb, OIDC, the Schema Registry's sources):
fetched on demand, aside on a worker thread, or ahead on a thread of its own."""

from __future__ import annotations

import threading

import pytest

from kafkawire.security.token_renewer import TokenRenewer, from_lifetime


class Source:
    """Answers the next of ``answers``: (token, lifetime) or an exception to raise."""

    def __init__(self, *answers: tuple[str, float] | Exception) -> None:
        self.answers = list(answers)
        self.asked: list[float] = []

    def __call__(self, now: float) -> tuple[str, float]:
        self.asked.append(now)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        token, lifetime = answer
        return token, now + lifetime


def test_current_fetches_on_first_use_and_again_once_due() -> None:
    source = Source(("a", 100.0), ("b", 100.0))
    tokens = TokenRenewer(source)
    assert tokens.current(0.0) == "a" and tokens.current(79.0) == "a"
    assert tokens.current(80.0) == "b" and source.asked == [0.0, 80.0]


def test_from_lifetime_counts_the_lifetime_from_when_it_was_asked() -> None:
    tokens = TokenRenewer(from_lifetime(lambda: ("t", 10.0)))
    assert tokens.current(5.0) == "t"
    assert tokens.current(12.9) == "t"  # renewed at 5 + 8


def test_fetch_aside_answers_none_then_the_token_and_calls_back() -> None:
    source = Source(("a", 100.0))
    tokens = TokenRenewer(source, clock=lambda: 0.0)
    ready = threading.Event()
    assert tokens.current_or_fetch_aside(0.0, ready.set) is None
    assert ready.wait(10)
    assert tokens.current_or_fetch_aside(1.0, ready.set) == "a" and len(source.asked) == 1


def test_a_failed_fetch_aside_is_raised_once_and_the_old_token_kept_until_it_expires() -> None:
    clock = [0.0]
    source = Source(("a", 100.0), OSError("endpoint down"), OSError("still down"), ("b", 100.0))
    tokens = TokenRenewer(source, clock=lambda: clock[0])

    def settle(now: float) -> None:
        done = threading.Event()
        assert tokens.current_or_fetch_aside(now, done.set) is None
        assert done.wait(10)

    settle(0.0)
    clock[0] = 85.0
    settle(85.0)  # due at 80: renewed aside, which fails
    assert tokens.current_or_fetch_aside(85.0, _never) == "a"  # the failure heard; "a" still valid
    settle(101.0)  # expired: fetched again, fails again
    with pytest.raises(OSError, match="still down"):
        tokens.current_or_fetch_aside(101.0, _never)
    clock[0] = 102.0
    settle(102.0)
    assert tokens.current_or_fetch_aside(102.0, _never) == "b"


def test_renewing_ahead_retries_failures_and_callers_keep_the_token_until_it_expires() -> None:
    checked, renewed = threading.Event(), threading.Event()
    failures: list[Exception] = []
    answers: list[tuple[str, float] | Exception] = [("a", 0.05), RuntimeError("down"), ("b", 60.0)]

    def fetch(now: float) -> tuple[str, float]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            assert checked.wait(10)  # the renewer's first try fails only once the caller has looked
            raise answer
        if answer[0] == "b":
            renewed.set()
        return answer[0], now + answer[1]

    tokens = TokenRenewer(fetch, "test-renewer")
    assert tokens.current(0.0) == "a"
    tokens.renew_ahead(failures.append, 0.01)
    try:
        assert tokens.current(0.045) == "a"  # past 80% of its 0.05 s: the thread's to renew, not ours
        checked.set()
        assert renewed.wait(10)
    finally:
        tokens.close()
    assert [str(e) for e in failures] == ["down"] and not answers
    assert tokens.current(0.045) == "b"


def _never() -> None:
    raise AssertionError("no fetch should start")
