"""What the producer's statistics count per batch, on the IO thread (only when statistics are on):
per topic the sizes and record counts of the batches sent (``batchsize``, ``batchcnt``), per broker
how long the records waited in the producer (``int_latency``), per partition the records delivered
and their key and value bytes (``txmsgs``, ``txbytes``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..client.network_client import Client
from ..core.accumulator import Pending, ProducerBatch
from ..core.stats_window import Window


class BatchStats:
    def __init__(self, client: Client, message_max_bytes: int, batch_num_messages: int) -> None:
        self._client = client
        self._spans = (message_max_bytes, batch_num_messages)  # librdkafka's spans for the two windows
        self.windows: dict[str, tuple[Window, Window]] = {}
        self.delivered: dict[tuple[str, int], list[int]] = {}  # (topic, partition) -> [records, bytes]

    def topic_windows(self, topic: str) -> tuple[Window, Window]:
        windows = self.windows.get(topic)
        if windows is None:
            windows = self.windows[topic] = (Window(0, self._spans[0]), Window(0, self._spans[1]))
        return windows

    def framed(self, node: int, topics: Mapping[str, Sequence[ProducerBatch]]) -> None:
        """A Produce request goes on the wire to ``node``: each batch's size and count, and the
        wait of its records (each counted at the wait of the batch's oldest, one sample a record)."""
        conn = self._client.connection(node)
        latency = conn.stats.windows["int_latency"] if conn is not None and conn.stats.windows is not None else None
        now = self._client.engine.now()
        for topic, batches in topics.items():
            batchsize, batchcnt = self.topic_windows(topic)
            for batch in batches:
                count = batch.count
                batchsize.add(len(batch.payload or b""))
                batchcnt.add(count)
                if latency is not None and count:
                    latency.add(int((now - batch.created) * 1e6), count)

    def acknowledged(self, messages: Sequence[Pending]) -> None:
        """One delivered batch's records."""
        first = messages[0]
        counts = self.delivered.setdefault((first.topic, first.partition), [0, 0])
        counts[0] += len(messages)
        counts[1] += sum(len(m.key or b"") + len(m.value or b"") for m in messages)
