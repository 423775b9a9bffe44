"""What a pipeline run did, and how it is printed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import IO


@dataclass
class PipelineSummary:
    input: str
    input_format: str
    topic: str
    bootstrap: str
    value_format: str
    key_column: str | None
    exactly_once: bool
    embedded_broker: bool = False
    master: str = ""  # where Spark ran: local[*], spark://host:7077, yarn, ...
    topic_created: bool = False
    rows: int = 0  # rows the data source wrote (its successful tasks' commit messages)
    bytes: int = 0  # their keys, values and headers
    seconds: float = 0.0  # the write job, wall clock
    writing_seconds: float | None = None  # first row at the data source to the last task done (its report)
    tasks: int = 0
    failed_tasks: int | None = 0  # attempts that failed (Spark retried them); None: not reported (Connect)
    error: str | None = None  # the write failed: the first line of why
    appended: dict[int, int] = field(default_factory=dict)  # partition -> offsets the log grew by
    read_back: dict[int, int] | None = None  # partition -> committed records read back (None: not verified)
    read_back_bytes: int = 0  # keys and values of the records read back
    avro_schema: str | None = None
    subject: str | None = None  # the Schema Registry subject the avro schema is registered under
    decoded: int | None = None  # values the read-back decoded with the registry's schemas

    @property
    def partitions_used(self) -> list[int]:
        counts = self.read_back if self.read_back is not None else self.appended
        return sorted(p for p, n in counts.items() if n > 0)

    @property
    def read_back_total(self) -> int | None:
        return None if self.read_back is None else sum(self.read_back.values())

    @property
    def ok(self) -> bool:
        """The write succeeded and, when verified, the topic holds exactly the rows written."""
        if self.error is not None:
            return False
        return self.read_back is None or self.read_back_total == self.rows


def size_text(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def time_line(rows: int, size: int, seconds: float, writing: float | None, what: str) -> str:
    """The rates over the rows' own flow when the data source measured it (``writing``: its first
    row to its last task done), else over ``seconds``, the whole of ``what``."""
    if writing is None or writing <= 0:
        rate, byte_rate = (rows / seconds, size / seconds) if seconds > 0 else (0.0, 0.0)
        return f"{seconds:.2f} s {what} ({rate:,.0f} rows/s, {size_text(byte_rate)}/s)"
    return (
        f"{writing:.2f} s writing ({rows / writing:,.0f} rows/s, {size_text(size / writing)}/s) "
        f"in a {seconds:.2f} s {what}"
    )


def print_summary(s: PipelineSummary, out: IO[str]) -> None:
    key = f"key {s.key_column}" if s.key_column else "no key"
    guarantee = "exactly-once (transactions)" if s.exactly_once else "at-least-once (idempotent producer)"
    out.write("\n")
    out.write(f"Pipeline {s.input} ({s.input_format}) -> topic {s.topic} on {s.bootstrap}\n")
    out.write(f"  values      {s.value_format}, {key}, {guarantee}\n")
    out.write(f"  rows        {s.rows:,}\n")
    out.write(f"  bytes       {s.bytes:,} ({size_text(s.bytes)} of keys, values and headers)\n")
    out.write(f"  time        {time_line(s.rows, s.bytes, s.seconds, s.writing_seconds, 'write job')}\n")
    failed = f"{s.failed_tasks} failed attempts retried" if s.failed_tasks else "none failed"
    if s.failed_tasks is None:
        failed = "failed attempts not reported over Spark Connect"
    out.write(f"  spark       {s.master}: {s.tasks} task{'' if s.tasks == 1 else 's'}, {failed}\n")
    used = s.partitions_used
    counts = s.read_back if s.read_back is not None else s.appended
    total = len(s.appended) or len(counts)
    spread = ", ".join(f"{p}:{counts[p]:,}" for p in used)
    out.write(f"  partitions  {len(used)} of {total} used ({spread or 'none'})\n")
    if s.read_back is not None:
        got = s.read_back_total or 0
        verdict = "OK" if got == s.rows else "MISMATCH"
        committed = " (read_committed)" if s.exactly_once else ""
        out.write(f"  read back   {got:,} records from the topic with Fetch{committed}: {verdict}\n")
    if s.error is not None:
        out.write(f"  failures    the write failed: {s.error}\n")
    else:
        out.write("  failures    none\n")
    if s.avro_schema is not None:
        out.write(f"  avro schema {s.avro_schema}\n")
    if s.subject is not None:
        out.write(f"  registry    subject {s.subject}; read back and decoded {s.decoded} values\n")
