"""Issue 39: a request answerable elsewhere leaves a broker that is down at once; a coordinator that
cannot be reached is looked up every retry.backoff.ms."""

from __future__ import annotations

import itertools

from kafkawire.core import failover
from kafkawire.core.cluster_health import ClusterHealth
from kafkawire.core.failover import WhenDown, coordinator_query_delay, request_when_down
from kafkawire.core.kafka_error import KafkaError
from kafkawire.protocol.apis import (
    CREATE_TOPICS,
    DESCRIBE_CONFIGS,
    FETCH,
    FIND_COORDINATOR,
    INIT_PRODUCER_ID,
    METADATA,
)


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


def test_all_brokers_down_counts_only_brokers_still_down_now() -> None:
    """Issue 39: "3/3 brokers are down" was raised when one broker died, the two killed before it
    (restarted since, never reconnected to) still counting as down."""
    a, b, c = ("a", 1), ("b", 1), ("c", 1)
    known = [a, b, c]
    health = ClusterHealth(recent=10.0)
    down = KafkaError(KafkaError._TRANSPORT, "refused")
    assert health.failed(a, down, known, any_live=True, now=0.0) == []
    assert health.failed(b, down, known, any_live=True, now=9.0) == []
    # a failed 20 s ago and nothing tried it since (b 11 s ago): only c is known to be down now
    assert health.failed(c, down, known, any_live=False, now=20.0) == []
    # ... unless their connections still try to come back
    [err] = health.failed(c, down, known, any_live=False, trying=[a, b], now=21.0)
    assert err.code() == KafkaError._ALL_BROKERS_DOWN and err.str() == "3/3 brokers are down"
    # all failing together (within the longest reconnect backoff) is all of them
    together = ClusterHealth(recent=10.0)
    assert together.failed(a, down, known, any_live=False, now=50.0) == []
    assert together.failed(b, down, known, any_live=False, now=50.1) == []
    assert [e.code() for e in together.failed(c, down, known, any_live=False, now=50.2)] == [
        KafkaError._ALL_BROKERS_DOWN
    ]


def test_a_lookup_for_any_broker_fails_over_and_admin_rides_the_next_attempt() -> None:
    """Issue 39: a transactional producer's FindCoordinator queued on a broker that had just died
    waited out socket.timeout.ms there (init_transactions timed out), a joining member's Metadata
    37 s; admin requests, whose writes take a lost connection as final, still wait for the
    connection's next attempt."""
    for api in (FIND_COORDINATOR, INIT_PRODUCER_ID, METADATA):
        assert failover.fails_over(api, any_broker=True, coordinator_lane=False)
        assert not failover.fails_over(api, any_broker=False, coordinator_lane=False)  # to a given node
    for api in (CREATE_TOPICS, DESCRIBE_CONFIGS):
        assert not failover.fails_over(api, any_broker=True, coordinator_lane=False)
    assert failover.fails_over(FETCH, any_broker=False, coordinator_lane=False)
    assert failover.fails_over(INIT_PRODUCER_ID, any_broker=False, coordinator_lane=True)  # the coordinator's lane
