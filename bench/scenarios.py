"""What the benchmark runs: scenarios (the workload) and clients (who produces it).

A throughput scenario is named ``<size>-<keys>-<acks>-<compression>``, for example
``100b-keyless-acks1-none`` or ``1kb-keyed-acksall-lz4`` (acks=all always comes with
idempotence). Any such name is accepted on the command line; ``DEFAULT_SCENARIOS`` is the set the
issue's targets are read from. Special scenarios measure something else: ``latency``
(p50/p99 delivery latency at a fixed rate), ``rss`` (peak memory over ten million records with a
bounded buffer), ``spark`` (the data source writing a DataFrame in local mode), ``spark-read``
(the data source reading a topic into a DataFrame, against the read path alone), ``consume``
(consumers reading records already in the topic: bench/consume.py) and ``serde-avro`` (Avro with
a Schema Registry through SerializingProducer and DeserializingConsumer: bench/serde.py). A
throughput name may end in ``-ssl`` or ``-sasl_ssl`` (SCRAM-SHA-512): the same workload over a Kafka 2.3 TLS listener, for the
clients that take librdkafka's options; the run then uses that broker for every scenario, so the
TLS ratio sits next to a plaintext one taken on the same broker.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import asdict, dataclass, field
from typing import Any

SIZES = {"100b": 100, "1kb": 1000}
COMPRESSIONS = ("none", "lz4", "zstd")
SECURITIES = ("ssl", "sasl_ssl")
# The clients configured with librdkafka's option names (bench/workload.py's librdkafka_style_conf).
SECURED_CLIENTS = ("confluent-kafka", "kafkawire-produce", "kafkawire-batch")

# Every client the benchmark knows, in the order the table lists them.
CLIENTS = (
    "confluent-kafka",
    "kafkawire-produce",
    "kafkawire-batch",
    "kafkawire-arrow",
    "kafkawire-aio",
    "kafkawire-aio-batch",
    "aiokafka",
    "kafka-python",
)
# Not a client: kafkawire-aio's loop over a stand-in that only returns futures (bench/asyncio_floor.py),
# run beside kafkawire-aio in the headline scenario; AIOProducer.produce()'s CPU per record is held
# against its (issue 41: within 1.5x). Nothing is written.
FLOOR = "asyncio-floor"
HEADLINE = "100b-keyless-acks1-none"
# Pure-Python peers are 10-40x slower: they produce a fraction of the records (a rate is a rate,
# and a full-size run of theirs would take most of the benchmark's time).
SLOW_CLIENTS = ("aiokafka", "kafka-python")
# Clients without a per-record latency (they hand over whole batches).
BULK_CLIENTS = ("kafkawire-batch", "kafkawire-arrow", "kafkawire-aio-batch")

DEFAULT_SCENARIOS = (
    HEADLINE,
    "100b-keyed-acks1-none",
    "1kb-keyless-acks1-none",
    "100b-keyless-acksall-lz4",
    "100b-keyless-acksall-zstd",
    "latency",
    "rss",
    "spark",
    "spark-read",
    "consume",
    "serde-avro",
)

LATENCY_RATE = 10_000  # records per second
RSS_RECORDS = 10_000_000
RSS_BUFFER_KBYTES = 65_536  # queue.buffering.max.kbytes for the rss scenario (64 MiB)
SPARK_ROWS = 1_000_000
# Whole-size jobs a Spark scenario's worker runs before the timed one (its baseline too): the JVM's
# JIT takes a few 1M-row jobs to compile the loops of the Arrow hand-off (bench/RESULTS.md notes).
WARM_UP_JOBS = 4
CONSUME_RECORDS = 1_000_000
# The consume scenario's readers; confluent-consume is the baseline of its ratios.
CONSUME_CLIENTS = (
    "confluent-consume",
    "confluent-poll",
    "kafkawire-consume",
    "kafkawire-poll",
    "kafkawire-arrow-read",
    "aiokafka-getmany",
    "confluent-aiopoll",
    "kafkawire-aiopoll",
)
SERDE_RECORDS = 200_000
# The serde-avro scenario's clients: each library's serializing producer and deserializing consumer.
SERDE_CLIENTS = ("confluent-avro", "kafkawire-avro")


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # "throughput", "latency", "rss", "spark", "spark-read", "consume" or "serde"
    value_size: int = 100
    keyed: bool = False
    acks_all: bool = False  # acks=all with enable.idempotence
    compression: str = "none"
    records: int = 1_000_000
    rate: int = 0  # records/s for the latency scenario
    seconds: float = 0.0  # how long the latency scenario runs
    buffer_kbytes: int = 0  # the rss scenario's queue.buffering.max.kbytes
    clients: tuple[str, ...] = field(default=CLIENTS)
    security: str = "plaintext"  # or one of SECURITIES
    client_conf: dict[str, Any] = field(default_factory=dict)  # the driver's listener settings
    topic_config: dict[str, str] = field(default_factory=dict)  # the topic's configs (bench/scale.py's size curve)
    topics: int = 1  # the scale curves' subscribe kind: topics named <topic>-<i> (bench/curves.py)
    pattern: bool = False  # ... subscribed by regex rather than by list

    @property
    def secured(self) -> bool:
        return self.security != "plaintext"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scenario:
        return cls(**{**data, "clients": tuple(data["clients"])})

    def describe(self) -> str:
        if self.kind == "latency":
            return f"p50/p99 delivery latency at {self.rate:,} msg/s for {self.seconds:g} s, 100 B keyless, acks=1"
        if self.kind == "rss":
            return (
                f"{self.records:,} x 100 B keyless, acks=1, buffer limit "
                f"queue.buffering.max.kbytes={self.buffer_kbytes} ({self.buffer_kbytes // 1024} MiB): peak RSS"
            )
        if self.kind == "spark":
            return (
                f"{self.records:,} rows of 100 B values: Spark data source (local mode) vs produce_batch(); each "
                f"worker writes them {WARM_UP_JOBS + 1} times, into a scratch topic but the last: the last write is the "
                "result (the steady rate of a long-running job), the first is shown as the first job's"
            )
        if self.kind == "spark-read":
            return (
                f"{self.records:,} records of 100 B values read: Spark data source into a DataFrame (local mode) "
                "vs the read path alone (fetch_range into Arrow columns, one process); each worker reads them "
                f"{WARM_UP_JOBS + 1} times: the last read is the result (the steady rate of a long-running job), "
                "the first is shown as the first job's"
            )
        if self.kind == "consume":
            return (
                f"{self.records:,} x 100 B already in the topic, read from the beginning (every partition assigned): "
                "poll() loop, consume(1000), consume_arrow(1000), aiokafka getmany(max_records=1000), AIOConsumer.poll() loop"
            )
        if self.kind == "serde":
            return (
                f"{self.records:,} Avro records (10 fields: strings, ints, longs, doubles, a boolean, an optional "
                "string), Schema Registry framing: SerializingProducer + AvroSerializer writes them (acks=1), then "
                "DeserializingConsumer + AvroDeserializer reads them back (poll() loop, every partition assigned)"
            )
        acks = "acks=all + idempotence" if self.acks_all else "acks=1"
        keys = "keyed" if self.keyed else "keyless"
        over = {"ssl": ", over TLS", "sasl_ssl": ", over SASL_SSL (SCRAM-SHA-512)"}.get(self.security, "")
        return f"{self.records:,} x {self.value_size} B {keys}, {acks}, compression {self.compression}{over}"


def parse_scenario(name: str, quick: bool) -> Scenario:
    """A scenario from its name; ``quick`` shrinks every count so a whole run takes a minute or two."""
    if name == "latency":
        return Scenario(
            name,
            "latency",
            rate=LATENCY_RATE,
            seconds=2.0 if quick else 10.0,
            records=0,
            clients=tuple(c for c in CLIENTS if c not in BULK_CLIENTS),
        )
    if name == "rss":
        return Scenario(
            name,
            "rss",
            records=RSS_RECORDS // 20 if quick else RSS_RECORDS,
            buffer_kbytes=RSS_BUFFER_KBYTES,
            clients=("confluent-kafka", "kafkawire-produce", "kafkawire-arrow"),
        )
    if name == "spark":
        return Scenario(
            name,
            "spark",
            records=SPARK_ROWS // 10 if quick else SPARK_ROWS,
            clients=("kafkawire-batch", "kafkawire-spark"),
        )
    if name == "spark-read":
        return Scenario(
            name,
            "spark-read",
            records=SPARK_ROWS // 10 if quick else SPARK_ROWS,
            clients=("kafkawire-fetch", "kafkawire-spark-read"),
        )
    if name == "consume":
        return Scenario(
            name, "consume", records=CONSUME_RECORDS // 10 if quick else CONSUME_RECORDS, clients=CONSUME_CLIENTS
        )
    if name == "serde-avro":
        return Scenario(name, "serde", records=SERDE_RECORDS // 10 if quick else SERDE_RECORDS, clients=SERDE_CLIENTS)
    try:
        size, keys, acks, compression, *over = name.split("-")
        value_size = SIZES[size]
        if keys not in ("keyless", "keyed") or acks not in ("acks1", "acksall") or compression not in COMPRESSIONS:
            raise ValueError
        if over and (len(over) > 1 or over[0] not in SECURITIES):
            raise ValueError
    except (ValueError, KeyError):
        raise SystemExit(
            f"unknown scenario {name!r}: expected latency, rss, spark, spark-read, consume, serde-avro or <size>-<keys>-<acks>-<compression> "
            f"with size in {sorted(SIZES)}, keys keyless/keyed, acks acks1/acksall, compression in {COMPRESSIONS}, "
            f"optionally -<security> in {SECURITIES}"
        ) from None
    records = 1_000_000 if value_size <= 100 else 400_000  # 1 KB: 400 MB a run, past the first window
    return Scenario(
        name,
        "throughput",
        value_size=value_size,
        keyed=keys == "keyed",
        acks_all=acks == "acksall",
        compression=compression,
        records=records // 10 if quick else records,
        clients=SECURED_CLIENTS if over else CLIENTS + ((FLOOR,) if name == HEADLINE else ()),
        security=over[0] if over else "plaintext",
    )


def all_throughput_scenarios() -> list[str]:
    """The full matrix: every size, key mode, acks mode and compression."""
    return [
        "-".join(parts) for parts in itertools.product(SIZES, ("keyless", "keyed"), ("acks1", "acksall"), COMPRESSIONS)
    ]


def make_values(size: int, distinct: int = 1024, seed: int = 7) -> list[bytes]:
    """Distinct values of ``size`` bytes, text-like (they compress about 2:1, as logs and JSON do)."""
    rng = random.Random(seed)
    words = [bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(500)]
    if size > 1000:  # the size curve's large values: slices of one text at distinct offsets (fast to make)
        text = b" ".join(rng.choices(words, k=(size + distinct * 13) // 5 + 16))
        return [text[i * 13 : i * 13 + size] for i in range(distinct)]
    values = []
    for _ in range(distinct):
        out = bytearray()
        while len(out) < size:
            out += rng.choice(words) + b" "
        values.append(bytes(out[:size]))
    return values


def make_keys(distinct: int = 10_000) -> list[bytes]:
    return [f"customer-{i:05d}".encode() for i in range(distinct)]
