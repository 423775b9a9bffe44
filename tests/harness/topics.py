"""Topic set-up for tests on Tansu, through kafkawire's own AdminClient (not a second copy)."""

from __future__ import annotations

from kafkawire.admin import AdminClient, NewTopic


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0) -> None:
    """``timeout`` bounds a hang (a loaded broker may take seconds to elect the leaders); the call
    returns once the topic exists."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        future = admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=timeout)[topic]
        future.result(timeout + 30)  # (past the broker's own wait: the answer still has to come)
    finally:
        admin.close()
