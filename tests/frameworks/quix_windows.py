"""A quixstreams application written for confluent-kafka: per-key tumbling-window count and sum of
purchases, emitted when each window closes, to an output topic. The test runs it twice, plainly and
under ``python -m kafkawire.run``, and compares what each prints and writes.

usage: quix_windows.py BROKER GROUP INPUT OUTPUT GUARANTEE STATE_DIR EXPECTED_WINDOWS
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta

import confluent_kafka
from quixstreams import Application
from quixstreams.dataframe.windows import Count, Max, Sum


def main(broker: str, group: str, source: str, sink: str, guarantee: str, state_dir: str, windows: int) -> None:
    app = Application(
        broker_address=broker,
        consumer_group=group,
        auto_offset_reset="earliest",
        processing_guarantee=guarantee,  # type: ignore[arg-type]
        state_dir=state_dir,
        commit_every=40,  # several checkpoints (and, exactly-once, transactions) in one run
        loglevel="WARNING",
    )
    purchases = app.topic(source, key_deserializer="str", value_deserializer="json")
    totals = app.topic(sink, key_serializer="str", value_serializer="json")
    sdf = app.dataframe(purchases)
    sdf = (
        sdf.tumbling_window(timedelta(seconds=10))
        .agg(count=Count(), total=Sum("amount"), largest=Max("amount"))
        .final(closing_strategy="partition")
    )
    sdf = sdf.to_topic(totals)
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    rows = app.run(count=windows, timeout=60, metadata=True)
    for row in sorted(rows, key=lambda r: (r["_key"], r["start"])):
        print(json.dumps({k: v for k, v in row.items() if not k.startswith("_") or k == "_key"}, sort_keys=True))


if __name__ == "__main__":
    broker, group, source, sink, guarantee, state_dir, windows = sys.argv[1:]
    main(broker, group, source, sink, guarantee, state_dir, int(windows))
