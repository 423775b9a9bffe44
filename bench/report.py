"""The results as Markdown: the issue's targets first (met or not, from medians of one run), then a
table per scenario with min/median/max over rounds and the ratio to confluent-kafka."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.results import Run, ScenarioResult
from bench.scenarios import FLOOR, HEADLINE

BASELINE = "confluent-kafka"
MiB = 1024 * 1024


def _rate(run: Run) -> float:
    r = run.result
    return r["records"] / r["seconds"] if r["seconds"] else 0.0


def _cpu_per_record(run: Run) -> float | None:
    r = run.result
    return r["cpu"] / r["records"] if r.get("cpu") and r["records"] else None


def _mbps(run: Run) -> float:
    r = run.result
    return r["payload_bytes"] / r["seconds"] / 1e6 if r["seconds"] else 0.0


def _stats(runs: list[Run], metric: Callable[[Run], float | None]) -> tuple[float, float, float] | None:
    values = [v for v in (metric(r) for r in runs if r.ok) if v is not None]
    if not values:
        return None
    return min(values), statistics.median(values), max(values)


def _median(sr: ScenarioResult, client: str, metric: Callable[[Run], float | None]) -> float | None:
    s = _stats(sr.of(client), metric)
    return None if s is None else s[1]


def _status(runs: list[Run]) -> str:
    ok = sum(r.ok for r in runs)
    if runs and all("skipped" in r.result for r in runs):
        return "skipped: " + runs[0].result["skipped"]
    problems = [r.problem for r in runs if r.problem]
    checked = "verified" if all(r.result.get("writes", True) for r in runs) else "done (writes nothing)"
    return f"{ok}/{len(runs)} {checked}" + (f"; {problems[0]}" if problems else "")


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _throughput_table(sr: ScenarioResult) -> list[str]:
    base = _median(sr, BASELINE, _rate)
    lines = [
        "| client | msg/s median | min - max | MB/s | CPU s | CPU us/msg | peak RSS MiB | x confluent | runs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for client in dict.fromkeys(r.client for r in sr.runs):
        runs = sr.of(client)
        rate = _stats(runs, _rate)
        if rate is None:
            lines.append(f"| {client} | - | - | - | - | - | - | - | {_status(runs)} |")
            continue
        cpu = _stats(runs, lambda r: r.result.get("cpu"))
        per_msg = _stats(runs, lambda r: r.result["cpu"] / r.result["records"] * 1e6 if r.result.get("cpu") else None)
        rss = _stats(runs, lambda r: r.result["rss_kb"] * 1024 / MiB)
        mb = _stats(runs, _mbps)
        ratio = f"{rate[1] / base:.2f}" if base else "-"
        lines.append(
            f"| {client} | {rate[1]:,.0f} | {rate[0]:,.0f} - {rate[2]:,.0f} | {_fmt(mb and mb[1], '.1f')} "
            f"| {_fmt(cpu and cpu[1], '.2f')} | {_fmt(per_msg and per_msg[1], '.2f')} "
            f"| {_fmt(rss and rss[1])} | {ratio} | {_status(runs)} |"
        )
    return lines


def _latency_table(sr: ScenarioResult) -> list[str]:
    base = _median(sr, BASELINE, lambda r: r.result.get("p99"))
    lines = [
        "| client | p50 ms median | p99 ms median | p99 min - max | p99 x confluent | CPU s | runs |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for client in dict.fromkeys(r.client for r in sr.runs):
        runs = sr.of(client)
        p50 = _stats(runs, lambda r: r.result.get("p50"))
        p99 = _stats(runs, lambda r: r.result.get("p99"))
        cpu = _stats(runs, lambda r: r.result.get("cpu"))
        if p99 is None or p50 is None:
            lines.append(f"| {client} | - | - | - | - | - | {_status(runs)} |")
            continue
        ratio = f"{p99[1] / base:.2f}" if base else "-"
        lines.append(
            f"| {client} | {p50[1]:.2f} | {p99[1]:.2f} | {p99[0]:.2f} - {p99[2]:.2f} | {ratio} "
            f"| {_fmt(cpu and cpu[1], '.2f')} | {_status(runs)} |"
        )
    return lines


def _rss_table(sr: ScenarioResult) -> list[str]:
    limit = sr.scenario.buffer_kbytes * 1024 / MiB
    lines = [
        f"Buffer limit {limit:.0f} MiB; target: peak RSS <= {limit + 100:.0f} MiB.",
        "",
        "| client | peak RSS MiB median | max | msg/s median | CPU s | runs |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for client in dict.fromkeys(r.client for r in sr.runs):
        runs = sr.of(client)
        rss = _stats(runs, lambda r: r.result["rss_kb"] * 1024 / MiB)
        rate = _stats(runs, _rate)
        cpu = _stats(runs, lambda r: r.result.get("cpu"))
        if rss is None or rate is None:
            lines.append(f"| {client} | - | - | - | - | {_status(runs)} |")
            continue
        lines.append(
            f"| {client} | {rss[1]:,.0f} | {rss[2]:,.0f} | {rate[1]:,.0f} | {_fmt(cpu and cpu[1], '.2f')} | {_status(runs)} |"
        )
    return lines


def _spark_table(sr: ScenarioResult) -> list[str]:
    kind = sr.scenario.kind
    base_client, against = {
        "spark-read": ("kafkawire-fetch", "x read path"),
        "consume": ("confluent-consume", "x confluent consume(1000)"),
    }.get(kind, ("kafkawire-batch", "x produce_batch"))
    base = _median(sr, base_client, _rate)
    if kind == "consume":
        lines = [f"| client | rows/s median | min - max | {against} | runs |", "|---|---:|---:|---:|---|"]
    else:  # each worker runs the job several times; the last is the result
        first_base = _median(sr, base_client, _first_rate)
        lines = [
            f"| client | rows/s median (last job) | min - max | {against} | first job rows/s | first job {against} | runs |",
            "|---|---:|---:|---:|---:|---:|---|",
        ]
    for client in dict.fromkeys(r.client for r in sr.runs):
        runs = sr.of(client)
        rate = _stats(runs, _rate)
        if rate is None:
            lines.append(f"| {client} | - | - | - |{'' if kind == 'consume' else ' - | - |'} {_status(runs)} |")
            continue
        ratio = f"{rate[1] / base:.2f}" if base else "-"
        cells = f"| {client} | {rate[1]:,.0f} | {rate[0]:,.0f} - {rate[2]:,.0f} | {ratio} |"
        if kind != "consume":
            first = _median(sr, client, _first_rate)
            cells += f" {_fmt(first)} | {f'{first / first_base:.2f}' if first and first_base else '-'} |"
        lines.append(f"{cells} {_status(runs)} |")
    return lines


def _first_rate(run: Run) -> float | None:
    """The first of a worker's jobs (Spark's Python workers starting, the JVM's JIT cold)."""
    r = run.result
    return r["records"] / r["first_seconds"] if r.get("first_seconds") else None


def _read_rate(run: Run) -> float | None:
    r = run.result
    return r["records"] / r["read_seconds"] if r.get("read_seconds") else None


def _serde_table(sr: ScenarioResult) -> list[str]:
    """Both halves of each run: serialize + produce, then consume + deserialize."""
    base_write, base_read = _median(sr, "confluent-avro", _rate), _median(sr, "confluent-avro", _read_rate)
    lines = [
        "| client | write msg/s median | min - max | x confluent | CPU us/msg | read msg/s median | min - max "
        "| x confluent | CPU us/msg | runs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for client in dict.fromkeys(r.client for r in sr.runs):
        runs = sr.of(client)
        write, read = _stats(runs, _rate), _stats(runs, _read_rate)
        if write is None or read is None:
            lines.append(f"| {client} | - | - | - | - | - | - | - | - | {_status(runs)} |")
            continue
        wcpu = _stats(runs, lambda r: r.result["cpu"] / r.result["records"] * 1e6)
        rcpu = _stats(runs, lambda r: r.result["read_cpu"] / r.result["records"] * 1e6)
        wx = f"{write[1] / base_write:.2f}" if base_write else "-"
        rx = f"{read[1] / base_read:.2f}" if base_read else "-"
        lines.append(
            f"| {client} | {write[1]:,.0f} | {write[0]:,.0f} - {write[2]:,.0f} | {wx} | {_fmt(wcpu and wcpu[1], '.2f')} "
            f"| {read[1]:,.0f} | {read[0]:,.0f} - {read[2]:,.0f} | {rx} | {_fmt(rcpu and rcpu[1], '.2f')} | {_status(runs)} |"
        )
    return lines


def _targets(results: list[ScenarioResult]) -> list[str]:
    by_name = {sr.scenario.name: sr for sr in results}
    rows: list[tuple[str, str, bool | None]] = []

    def ratio(
        name: str, client: str, metric: Callable[[Run], float | None] = _rate, base: str = BASELINE
    ) -> float | None:
        sr = by_name.get(name)
        if sr is None:
            return None
        a, b = _median(sr, client, metric), _median(sr, base, metric)
        return None if a is None or not b else a / b

    def check(target: str, value: float | None, ok: Callable[[float], bool], shown: str = "{:.2f}x") -> None:
        rows.append(
            (target, "not measured" if value is None else shown.format(value), None if value is None else ok(value))
        )

    headline = HEADLINE
    check(
        "produce() >= 1.0x confluent-kafka (100 B keyless acks=1)",
        ratio(headline, "kafkawire-produce"),
        lambda v: v >= 1.0,
    )
    check(
        "produce() keyed (default partitioner, CRC-32) >= 1.0x",
        ratio("100b-keyed-acks1-none", "kafkawire-produce"),
        lambda v: v >= 1.0,
    )
    for codec in ("lz4", "zstd"):
        check(
            f"acks=all + idempotence + {codec} >= 1.0x",
            ratio(f"100b-keyless-acksall-{codec}", "kafkawire-produce"),
            lambda v: v >= 1.0,
        )
    check(
        "1 KB values: MB/s >= 1.0x confluent-kafka",
        ratio("1kb-keyless-acks1-none", "kafkawire-produce", _mbps),
        lambda v: v >= 1.0,
    )
    check(
        "produce_batch() >= 1.5x confluent-kafka produce() loop", ratio(headline, "kafkawire-batch"), lambda v: v >= 1.5
    )
    check(
        "produce_arrow() >= 3x confluent-kafka produce() loop", ratio(headline, "kafkawire-arrow"), lambda v: v >= 3.0
    )
    check(
        "AIOProducer.produce() >= 0.5x confluent-kafka produce() loop",
        ratio(headline, "kafkawire-aio"),
        lambda v: v >= 0.5,
    )
    check(
        "AIOProducer.produce() CPU us per record <= 1.5x the asyncio floor's (same loop, a stand-in)",
        ratio(headline, "kafkawire-aio", _cpu_per_record, FLOOR),
        lambda v: v <= 1.5,
        "{:.2f}x",
    )
    check(
        "produce() >= 4x aiokafka (100 B keyless acks=1)",
        ratio(headline, "kafkawire-produce", base="aiokafka"),
        lambda v: v >= 4,
    )
    check(
        "AIOProducer.produce_batch() >= 1.5x confluent-kafka produce() loop",
        ratio(headline, "kafkawire-aio-batch"),
        lambda v: v >= 1.5,
    )
    acks1 = ratio(headline, "kafkawire-produce")
    for over in ("ssl", "sasl_ssl"):
        tls = ratio(f"{headline}-{over}", "kafkawire-produce")
        lost = None if acks1 is None or tls is None else (acks1 - tls) * 100
        shown = "{:+.0f}" if lost is None else f"{tls:.2f}x vs {acks1:.2f}x: {{:.0f}} points lost"
        check(f"{over} ratio >= plaintext ratio - 10 points (100 B, same broker)", lost, lambda v: v <= 10, shown)
    check(
        "p99 latency at 10k msg/s <= 1.5x confluent-kafka",
        ratio("latency", "kafkawire-produce", lambda r: r.result.get("p99")),
        lambda v: v <= 1.5,
        "{:.2f}x",
    )
    rss_sr = by_name.get("rss")
    limit = None if rss_sr is None else rss_sr.scenario.buffer_kbytes * 1024 / MiB + 100
    for client, form in (("kafkawire-produce", "produce()"), ("kafkawire-arrow", "produce_arrow()")):
        rss = None if rss_sr is None else _median(rss_sr, client, lambda r: r.result["rss_kb"] * 1024 / MiB)
        check(
            f"10M records, {form}: peak RSS <= buffer limit + 100 MiB ({_fmt(limit)} MiB)",
            rss,
            lambda v: limit is not None and v <= limit,
            "{:,.0f} MiB",
        )
    check(
        "Spark data source >= 0.75x produce_batch() rows/s (steady: last job; issue 51)",
        ratio("spark", "kafkawire-spark", base="kafkawire-batch"),
        lambda v: v >= 0.75,
    )
    check(
        "Spark reader >= 0.9x the read path alone rows/s (steady: last job; issue 51)",
        ratio("spark-read", "kafkawire-spark-read", base="kafkawire-fetch"),
        lambda v: v >= 0.9,
    )
    check(
        "consumer poll() loop >= 0.5x confluent-kafka poll() loop",
        ratio("consume", "kafkawire-poll", base="confluent-poll"),
        lambda v: v >= 0.5,
    )
    check(
        "poll() CPU us per record <= confluent-kafka's",
        ratio("consume", "kafkawire-poll", _cpu_per_record, "confluent-poll"),
        lambda v: v <= 1.0,
        "{:.2f}x",
    )
    check(
        "AIOConsumer.poll() loop >= 1.0x confluent-kafka's AIOConsumer.poll()",
        ratio("consume", "kafkawire-aiopoll", base="confluent-aiopoll"),
        lambda v: v >= 1.0,
    )
    check(
        "consume(1000) >= 0.8x confluent-kafka consume(1000)",
        ratio("consume", "kafkawire-consume", base="confluent-consume"),
        lambda v: v >= 0.8,
    )
    check(
        "consume(1000) >= 4x aiokafka getmany",
        ratio("consume", "kafkawire-consume", base="aiokafka-getmany"),
        lambda v: v >= 4,
    )
    check(
        "consume_arrow(1000) >= 2x confluent-kafka consume(1000)",
        ratio("consume", "kafkawire-arrow-read", base="confluent-consume"),
        lambda v: v >= 2,
    )
    check(
        "Avro serialize + produce >= 1.0x confluent-kafka's",
        ratio("serde-avro", "kafkawire-avro", base="confluent-avro"),
        lambda v: v >= 1.0,
    )
    check(
        "Avro consume + deserialize >= 1.0x confluent-kafka's",
        ratio("serde-avro", "kafkawire-avro", _read_rate, "confluent-avro"),
        lambda v: v >= 1.0,
    )
    lines = ["| target | measured (medians, one run) | met |", "|---|---|---|"]
    for target, shown, met in rows:
        lines.append(f"| {target} | {shown} | {'-' if met is None else ('yes' if met else 'NO')} |")
    return lines


def render(results: list[ScenarioResult], meta: dict[str, Any]) -> str:
    v = meta["versions"]
    out = [
        "# Benchmark results",
        "",
        f"Run {meta['date']} ({meta['minutes']:.0f} min): `{meta['command']}`  ",
        f"Machine: {meta['machine']}  ",
        f"Broker: {meta['broker']}, loopback, {meta['partitions']} partitions per topic (a fresh topic per run)  ",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
        "",
        f"Each client runs in its own process, {meta['rounds']} rounds, clients' order rotating each round, after one uncounted warm-up run of the first client (a JVM broker compiles as it goes), the page cache dropped after each run when permitted (a broker's grown page cache slowed it on this VM). "
        "All clients: linger 5 ms (the Spark writer its data source's default, 100 ms), 1 MB batches, every record's delivery reported (the Arrow path's per produced "
        "batch, as the Spark writer's DeliveryTracker takes them), metadata fetched before the clock "
        "starts; the clock runs from the first record handed over to the last one acknowledged. Every run is "
        "verified by reading the topic back with confluent-kafka (CRC checks on): the broker must hold exactly "
        "the records acknowledged, and all must be acknowledged; runs failing that are left out of the medians. "
        f"aiokafka and kafka-python produce {meta['slow_fraction']:g} of the records of the others (a rate is a rate; "
        "full-size runs of theirs would take most of the time). CPU s is the producing process's user+system time "
        "over the clock (all its threads); peak RSS is the process's maximum.",
        "",
        "## Targets",
        "",
        *_targets(results),
        "",
    ]
    for sr in results:
        out += [f"## {sr.scenario.name}", "", sr.scenario.describe(), ""]
        kind = sr.scenario.kind
        if kind == "latency":
            out += _latency_table(sr)
        elif kind == "rss":
            out += _rss_table(sr)
        elif kind in ("spark", "spark-read", "consume"):
            out += _spark_table(sr)
        elif kind == "serde":
            out += _serde_table(sr)
        else:
            out += _throughput_table(sr)
        out.append("")
    return "\n".join(out)


def write_results(path: Path, text: str) -> None:
    """Replace the generated part of RESULTS.md, keeping hand-written notes below the marker."""
    marker = "<!-- notes: kept across runs -->"
    notes = ""
    if path.exists():
        old = path.read_text()
        if marker in old:
            notes = old[old.index(marker) :]
    path.write_text(text + "\n" + (notes or marker + "\n"))
