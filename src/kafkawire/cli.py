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
    pipeline = _add_pipeline_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "topics":
        return _topics(args)
    if args.command == "pipeline":
        return _pipeline(pipeline, args)

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


def _add_pipeline_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = commands.add_parser(
        "pipeline",
        help="read a dataset with Spark and write it to a Kafka topic (starts a local broker by default)",
        description="Read INPUT with Spark, serialize each row as a record value, write the records to TOPIC "
        "through the kafkawire Spark data source, read the topic back and print a summary. Without "
        "--bootstrap-servers an embedded Tansu broker is started for the run.",
    )
    p.add_argument("input", nargs="?", metavar="INPUT", help="a file, folder or glob Spark can read (hdfs://, s3a://, ...)")
    p.add_argument("--sample", action="store_true", help="use the bundled sample dataset (5,000 orders, JSON lines)")
    p.add_argument("--topic", required=True, help="the topic to write (created when missing)")
    p.add_argument("--bootstrap-servers", help="host:port[,host:port...] (default: an embedded local broker)")
    p.add_argument("--key-column", help="the column whose text is each record's key (default: no key)")
    p.add_argument("--format", choices=("json", "csv", "parquet"), help="input format (default: from the file name, else json)")
    p.add_argument("--value-format", choices=("json", "avro", "string"), default="json",
                   help="json: the row as a JSON object (default); avro: an Avro binary datum (schema printed); "
                   "string: one column's text, or the columns' texts joined by ','")  # fmt: skip
    p.add_argument("--master", help="Spark master, e.g. local[*] or spark://host:7077 (default: spark-submit's, else local[*])")
    p.add_argument("--exactly-once", action="store_true", help="write each task's rows in one Kafka transaction")
    p.add_argument("--transactional-id-prefix", help="with --exactly-once (default: kafkawire-pipeline-TOPIC)")
    p.add_argument("--partitions", type=int, default=6, help="partitions of a topic the run creates (default 6)")
    p.add_argument("--replication-factor", type=int,
                   help="of a topic the run creates (default: 1 on the embedded broker, else the broker's)")  # fmt: skip
    p.add_argument("--kafka-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a producer option for the data source, e.g. compression.type=lz4 (repeatable)")  # fmt: skip
    p.add_argument("--spark-partitions", type=int, help="repartition the input into this many write tasks")
    p.add_argument("--no-verify", action="store_true", help="do not read the topic back after the write")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds any one broker request may take (default 30)")
    return p


def _pipeline(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Usage errors exit 2 (argparse's convention), a failed run 1."""
    from .pipeline import PipelineError, PipelineOptions, run, sample_path

    if args.sample == (args.input is not None):
        parser.error("give either INPUT or --sample")
    kafka_options = {}
    for item in args.kafka_option:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--kafka-option expects KEY=VALUE, got {item!r}")
        kafka_options[key.removeprefix("kafka.")] = value
    if args.transactional_id_prefix and not args.exactly_once:
        parser.error("--transactional-id-prefix needs --exactly-once")
    options = PipelineOptions(
        input=str(sample_path()) if args.sample else args.input,
        topic=args.topic,
        bootstrap_servers=args.bootstrap_servers,
        key_column=args.key_column,
        input_format=args.format,
        value_format=args.value_format,
        master=args.master,
        exactly_once=args.exactly_once,
        transactional_id_prefix=args.transactional_id_prefix,
        partitions=args.partitions,
        replication_factor=args.replication_factor,
        kafka_options=kafka_options,
        spark_partitions=args.spark_partitions,
        verify=not args.no_verify,
        progress=not args.no_progress,
        timeout=args.timeout,
    )
    try:
        summary = run(options)
    except PipelineError as exc:
        print(f"kafkawire pipeline: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"kafkawire pipeline needs PySpark: pip install 'kafkawire[spark]' ({exc})", file=sys.stderr)
        return 1
    except (KafkaException, LocalBrokerError) as exc:
        print(f"kafkawire pipeline failed: {exc}", file=sys.stderr)
        return 1
    if not summary.ok:
        print("kafkawire pipeline failed: " + (summary.error or "the topic does not hold the rows written"), file=sys.stderr)
        return 1
    return 0


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
