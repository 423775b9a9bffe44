"""topic.blacklist's configuration: a list of regular expressions, refused by the share consumer
(as librdkafka, in its words)."""

from __future__ import annotations

import pytest

from kafkawire import Consumer, KafkaException, ShareConsumer


def test_topic_blacklist_takes_regular_expressions_only() -> None:
    with pytest.raises(KafkaException, match=r"topic\.blacklist"):
        Consumer({"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "topic.blacklist": "ok,(unclosed"})


def test_the_share_consumer_refuses_topic_blacklist_as_librdkafka() -> None:
    with pytest.raises(ValueError, match=r"`topic\.blacklist` is not applicable for share consumer"):
        ShareConsumer({"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "topic.blacklist": "x"})
