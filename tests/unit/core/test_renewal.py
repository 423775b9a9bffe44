"""When a bearer token is renewed: 80% into its life, or at once when it came already expired."""

from __future__ import annotations

from kafkawire.core.renewal import REFRESH_AT, renewal_due, renewal_time


def test_renewed_when_eighty_percent_of_its_life_has_passed() -> None:
    assert REFRESH_AT == 0.8
    assert renewal_time(1000.0, 1100.0) == 1080.0
    assert renewal_time(1000.0, 990.0) == 1000.0  # expired when obtained: renewed at once


def test_callers_fetch_at_renewal_time_unless_a_renewer_works_ahead() -> None:
    assert not renewal_due(1079.0, 1080.0, 1100.0, renewed_ahead=False)
    assert renewal_due(1080.0, 1080.0, 1100.0, renewed_ahead=False)
    # A renewer working ahead is retrying: callers keep the token until it expires.
    assert not renewal_due(1099.0, 1080.0, 1100.0, renewed_ahead=True)
    assert renewal_due(1100.0, 1080.0, 1100.0, renewed_ahead=True)
