"""Issue 39: a request answerable elsewhere leaves a broker that is down at once; a coordinator that
cannot be reached is looked up every retry.backoff.ms."""

from __future__ import annotations

import itertools

from kafkawire.core.failover import WhenDown, coordinator_query_delay, request_when_down


def test_only_a_request_that_can_fail_over_fails_at_once_and_only_while_its_broker_backs_off() -> None:
    for fails_over, failed, backing_off in itertools.product((False, True), repeat=3):
        when = request_when_down(fails_over=fails_over, failed_since_ready=failed, backing_off=backing_off)
        assert (when is WhenDown.FAIL) == (fails_over and failed and backing_off), (fails_over, failed, backing_off)
    # never opened or closed while idle: connect for it (the first attempt decides)
    assert request_when_down(fails_over=True, failed_since_ready=False, backing_off=False) is WhenDown.QUEUE


def test_the_coordinator_is_looked_up_every_retry_backoff_while_it_cannot_be_reached() -> None:
    assert coordinator_query_delay(interval=600.0, backoff=0.1, reachable=True) == 600.0
    assert coordinator_query_delay(interval=600.0, backoff=0.1, reachable=False) == 0.1  # was 60 s (a tenth)
    assert coordinator_query_delay(interval=0.05, backoff=0.1, reachable=False) == 0.05
