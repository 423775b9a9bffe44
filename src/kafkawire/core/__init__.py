"""The sans-IO core: everything that decides, taking bytes and ``now`` and returning bytes and actions."""

TopicPartitionKey = tuple[str, int]
"""A partition as a plain hashable key (topic, partition): internal maps use it, the public
`kafkawire.TopicPartition` class is what users see."""
