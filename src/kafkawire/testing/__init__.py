"""kafkawire.testing: an in-process Kafka cluster for tests, with fault injection.

Optional: the client never imports it. Importing it registers `MockCluster` with the client
(client/mock_cluster_registry.py), which ``test.mock.num.brokers`` starts; the client finds
this package through the ``kafkawire.mock_cluster`` entry point. Any Kafka client can reach it over loopback.
"""

from ..client.mock_cluster_registry import register as register_mock_cluster
from .dispatch import MockRequest
from .mock_cluster import MockCluster, MockClusterError

register_mock_cluster(MockCluster)

__all__ = ["MockCluster", "MockClusterError", "MockRequest"]
