"""Topic set-up for tests on Tansu, through kafkawire's own AdminClient (not a second copy)."""

from __future__ import annotations

from kafkawire.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 10.0) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=timeout)[topic].result(timeout)
    finally:
        admin.close()
