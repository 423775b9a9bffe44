"""The ``kafkawire`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import KafkaException
from .local_broker import LocalBrokerError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkawire", description="A Kafka client that speaks the wire protocol itself.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="produce a sample dataset and print a delivery summary (starts a local broker by default)"
    )
    demo.add_argument("--bootstrap-servers", help="use this cluster instead of an embedded local broker")
    demo.add_argument("--messages", type=int, default=100_000, help="records to produce (default 100000)")
    demo.add_argument("--partitions", type=int, default=6, help="partitions of the demo topic (default 6)")
    demo.add_argument("--topic", default="kafkawire-demo-orders")
    demo.add_argument("--timeout", type=float, default=30.0, help="seconds any one request may take (default 30)")
    args = parser.parse_args(argv)

    from . import demo as demo_job

    try:
        summary = demo_job.run(
            args.bootstrap_servers, args.messages, args.partitions, args.topic, sys.stdout, args.timeout
        )
    except (KafkaException, LocalBrokerError) as exc:
        print(f"kafkawire demo failed: {exc}", file=sys.stderr)
        return 1
    return 0 if summary.read_back == summary.delivered == summary.records else 1


if __name__ == "__main__":
    sys.exit(main())
