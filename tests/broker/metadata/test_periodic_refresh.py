"""The periodic metadata refresh (``topic.metadata.refresh.interval.ms``) beside librdkafka's.

The same idle client on confluent-kafka and on kafkawire, each on a librdkafka mock cluster of its
own that counts the Metadata requests it receives. Measured (interval 1 s): with a topic known both
ask every interval; with none known (an idle admin client or producer) both ask once on connecting,
once an interval later, then every 10 s; with -1 neither asks while idle. The counts over the same
window are compared, not times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest

import kafkawire
import kafkawire.admin
from kafkawire.protocol.apis import METADATA
from tests.harness.mock_cluster import MockCluster

pytestmark = [pytest.mark.broker, pytest.mark.slow]

LIBRARIES: dict[str, Any] = {"confluent": confluent_kafka, "kafkawire": kafkawire}


def metadata_requests(side: str, make: Callable[[Any, dict[str, Any]], Any], interval: int, idle: float) -> int:
    """Metadata requests an idle client sends over ``idle`` s, once ``make`` has built and used it."""
    with MockCluster(broker_count=3) as cluster:
        cluster.create_topic("orders", 2, 1)
        client = make(
            LIBRARIES[side], {"bootstrap.servers": cluster.bootstraps, "topic.metadata.refresh.interval.ms": interval}
        )
        try:
            cluster.start_request_tracking()
            cluster.clear_requests()
            time.sleep(idle)
            return len(cluster.requests_of(METADATA.key))
        finally:
            cluster.stop_request_tracking()
            close = getattr(client, "close", None)
            if callable(close) and side == "kafkawire":
                close()
            del client


def producing(lib: Any, conf: dict[str, Any]) -> Any:
    producer = lib.Producer(conf)
    producer.produce("orders", b"v")
    assert producer.flush(15) == 0
    return producer


def admin(lib: Any, conf: dict[str, Any]) -> Any:
    return lib.admin.AdminClient(conf)


@pytest.mark.parametrize(
    ("make", "interval", "idle"),
    [(producing, 1000, 4.5), (producing, -1, 3.0), (admin, 1000, 12.5)],
    ids=["known-topic", "off", "admin-brokers-only"],
)
def test_idle_refreshes_as_librdkafkas(make: Callable[..., Any], interval: int, idle: float) -> None:
    counts = {side: metadata_requests(side, make, interval, idle) for side in LIBRARIES}
    assert abs(counts["kafkawire"] - counts["confluent"]) <= 1, counts  # a request at the window's edge
    if interval < 0:
        assert counts == {"confluent": 0, "kafkawire": 0}
    else:
        assert min(counts.values()) >= 1, counts
