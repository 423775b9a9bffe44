"""kafkawire.testing: an in-process Kafka cluster for tests, with fault injection.

Optional: the client never imports it, except when ``test.mock.num.brokers`` asks a client to
start one. Any Kafka client can reach it over loopback.
"""

from .cluster import MockCluster, MockClusterError
from .dispatch import MockRequest

__all__ = ["MockCluster", "MockClusterError", "MockRequest"]
