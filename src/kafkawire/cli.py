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
    _add_topics_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "topics":
        return _topics(args)

    from . import demo as demo_job

    try:
        summary = demo_job.run(
            args.bootstrap_servers, args.messages, args.partitions, args.topic, sys.stdout, args.timeout
        )
    except (KafkaException, LocalBrokerError) as exc:
        print(f"kafkawire demo failed: {exc}", file=sys.stderr)
        return 1
    return 0 if summary.read_back == summary.delivered == summary.records else 1


def _add_topics_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    topics = commands.add_parser("topics", help="list, create, describe and delete topics")
    topics.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port...]")
    topics.add_argument("--timeout", type=float, default=30.0, help="seconds each request may take (default 30)")
    actions = topics.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="topics with their partition counts")
    create = actions.add_parser("create", help="create a topic")
    create.add_argument("name")
    create.add_argument("--partitions", type=int, default=-1, help="default: the broker's")
    create.add_argument("--replication-factor", type=int, default=-1, help="default: the broker's")
    create.add_argument("--config", action="append", default=[], metavar="KEY=VALUE", help="a topic config (repeatable)")
    create.add_argument("--validate-only", action="store_true", help="ask the broker to check without creating")
    delete = actions.add_parser("delete", help="delete topics")
    delete.add_argument("names", nargs="+")
    describe = actions.add_parser("describe", help="partitions (leader, replicas, ISR) and configs of a topic")
    describe.add_argument("name")


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns as wide as their widest cell."""
    cells = [[str(c) for c in row] for row in [headers, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells)


def _topics(args: argparse.Namespace) -> int:
    """Run one ``kafkawire topics`` action; every failure is a message on stderr and exit code 1."""
    from .admin import AdminClient, ConfigResource, NewTopic

    try:
        with AdminClient({"bootstrap.servers": args.bootstrap_servers}) as admin:
            if args.action == "list":
                md = admin.list_topics(timeout=args.timeout)
                rows = [(name, len(t.partitions), t.error or "") for name, t in sorted(md.topics.items())]
                print(_table(("TOPIC", "PARTITIONS", "ERROR"), rows))
            elif args.action == "create":
                config = {}
                for item in args.config:
                    key, sep, value = item.partition("=")
                    if not sep or not key:
                        print(f"kafkawire topics: --config expects KEY=VALUE, got {item!r}", file=sys.stderr)
                        return 2
                    config[key] = value
                topic = NewTopic(args.name, args.partitions, args.replication_factor, config=config or None)
                futures = admin.create_topics([topic], request_timeout=args.timeout, validate_only=args.validate_only)
                futures[args.name].result()
                print(f"{'validated' if args.validate_only else 'created'} topic {args.name}")
            elif args.action == "delete":
                failed = 0
                for name, fut in admin.delete_topics(args.names, request_timeout=args.timeout).items():
                    try:
                        fut.result()
                        print(f"deleted topic {name}")
                    except KafkaException as exc:
                        failed += 1
                        print(f"kafkawire topics: cannot delete {name}: {exc.args[0]}", file=sys.stderr)
                return 1 if failed else 0
            else:
                md = admin.list_topics(args.name, timeout=args.timeout)
                info = md.topics.get(args.name)
                if info is None or info.error is not None:
                    reason = "not found" if info is None else info.error
                    print(f"kafkawire topics: {args.name}: {reason}", file=sys.stderr)
                    return 1
                parts = [(p.id, p.leader, ",".join(map(str, p.replicas)), ",".join(map(str, p.isrs)))
                         for p in sorted(info.partitions.values(), key=lambda p: p.id)]  # fmt: skip
                print(_table(("PARTITION", "LEADER", "REPLICAS", "ISR"), parts))
                resource = ConfigResource("topic", args.name)
                configs = admin.describe_configs([resource], request_timeout=args.timeout)[resource].result()
                if configs:
                    print()
                    config_rows = [(e.name, "(sensitive)" if e.is_sensitive else e.value, e.source.name)
                            for e in sorted(configs.values(), key=lambda e: e.name)]  # fmt: skip
                    print(_table(("CONFIG", "VALUE", "SOURCE"), config_rows))
    except (KafkaException, TypeError, ValueError) as exc:
        print(f"kafkawire topics {args.action} failed: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
