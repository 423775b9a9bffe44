"""The scale curves as Markdown tables (medians over rounds, kafkawire against confluent-kafka, the
growth of each client's CPU per unit of work stated) and one matplotlib PNG per curve.

Below `bench.scale`, which runs the curves.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.results import Curve, Run
from bench.scenarios import Scenario

WHO = ("kafkawire", "confluent-kafka")
NOTES = "<!-- notes: kept across runs -->"
FLAT = 1.5  # CPU per unit of work within this factor across a curve counts as flat


@dataclass
class Point:
    curve: str
    series: str
    x: int
    scenario: Scenario | None = None  # None for the members curve (bench/rebalance.py)
    runs: dict[str, list[Run]] = field(default_factory=lambda: {w: [] for w in WHO})

    def median(self, who: str, metric: Callable[[dict[str, Any]], float | None]) -> float | None:
        values = [v for v in (metric(r.result) for r in self.runs[who] if r.ok) if v is not None]
        return statistics.median(values) if values else None

    def status(self) -> str:
        runs = [r for rs in self.runs.values() for r in rs]
        problems = [r.problem for r in runs if r.problem]
        return f"{sum(r.ok for r in runs)}/{len(runs)} ok" + (f"; {problems[0]}" if problems else "")

    def loads(self) -> list[float]:
        return [r.result["load"] for rs in self.runs.values() for r in rs if "load" in r.result]


def _units(r: dict[str, Any], unit: str) -> float:
    return r["payload_bytes"] / 1e6 if unit == "MB" else r["records"]


def _rate(unit: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda r: _units(r, unit) / r["seconds"] if r.get("seconds") else None


def _cpu(unit: str, key: str = "cpu") -> Callable[[dict[str, Any]], float | None]:
    return lambda r: r[key] * 1e6 / _units(r, unit) if r.get(key) is not None else None


def _fmt(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def growth(
    points: list[Point], who: str, metric: Callable[[dict[str, Any]], float | None], unit: str, measure: str = "us"
) -> str:
    """How ``metric`` (a cost per ``unit`` of work, in ``measure``; per nothing when ``unit`` is
    empty) changes from the curve's first x to its last."""
    known = [(p.x, p.median(who, metric)) for p in points]
    known = [(x, v) for x, v in known if v]
    if len(known) < 2:
        return "-"
    (x0, v0), (x1, v1) = known[0], known[-1]
    ratio = v1 / v0
    if ratio < 1 / FLAT:
        shape = "falling"  # a fixed cost per record spread over more bytes (the size curve)
    elif ratio <= FLAT:
        shape = "flat"
    else:
        slope = math.log(ratio) / math.log(x1 / x0)
        shape = "linear in x" if slope >= 0.8 else f"sublinear (x^{slope:.2f})"
        if slope > 1.2:
            shape = f"worse than linear (x^{slope:.2f})"
    per = f" per {unit}" if unit else ""
    return f"{shape}{per}: {v0:,.2f} -> {v1:,.2f} {measure} ({ratio:.2g}x over {x0:,} -> {x1:,})"


def _throughput_section(curve: Curve, points: list[Point]) -> list[str]:
    unit = curve.unit
    rate, cpu, broker_cpu = _rate(unit), _cpu(unit), _cpu(unit, "broker_cpu")
    per = "MB/s" if unit == "MB" else "rec/s"
    first = curve.name == "topics"
    lines = [
        f"| {curve.x_label} | series | kafkawire {per} | confluent {per} | x confluent "
        f"| CPU us/{unit} kw | CPU us/{unit} ck | broker us/{unit} kw | broker us/{unit} ck "
        f"| peak RSS MiB kw | ck |{' first record s kw | ck |' if first else ''} load | runs |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if first else "") + "---:|---|",
    ]
    for p in points:
        k, c = p.median("kafkawire", rate), p.median("confluent-kafka", rate)
        ratio = f"{k / c:.2f}" if k and c else "-"
        cells = [
            f"{p.x:,}",
            p.series,
            _fmt(k, ",.1f" if unit == "MB" else ",.0f"),
            _fmt(c, ",.1f" if unit == "MB" else ",.0f"),
            ratio,
            *(_fmt(p.median(w, cpu), ",.2f") for w in WHO),
            *(_fmt(p.median(w, broker_cpu), ",.2f") for w in WHO),
            *(_fmt(p.median(w, lambda r: r["rss_kb"] / 1024)) for w in WHO),
        ]
        if first:
            cells += [_fmt(p.median(w, lambda r: r.get("first_seconds")), ".2f") for w in WHO]
        loads = p.loads()
        cells += [f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-", p.status()]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Growth of CPU per unit of work (medians, first to last point):", ""]
    for name in dict.fromkeys(p.series for p in points):
        mine = [p for p in points if p.series == name]
        for who in WHO:
            lines.append(f"- {name}, {who}: {growth(mine, who, cpu, unit)}")
        lines.append(f"- {name}, broker (kafkawire's runs): {growth(mine, 'kafkawire', broker_cpu, unit)}")
    return lines


def _latency_section(curve: Curve, points: list[Point]) -> list[str]:
    lines = [
        "| records/s | p50 ms kw | p99 kw | p99.9 kw | p50 ms ck | p99 ck | p99.9 ck | p99 ck / kw "
        "| rate reached kw | ck | CPU us/rec kw | ck | load | runs |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in points:
        q = {w: [p.median(w, lambda r, k=k: r.get(k)) for k in ("p50", "p99", "p999")] for w in WHO}
        k99, c99 = q["kafkawire"][1], q["confluent-kafka"][1]
        loads = p.loads()
        cells = [
            f"{p.x:,}",
            *(_fmt(v, ".2f") for v in q["kafkawire"]),
            *(_fmt(v, ".2f") for v in q["confluent-kafka"]),
            f"{c99 / k99:.2f}" if k99 and c99 else "-",
            *(_fmt(p.median(w, lambda r: r.get("sent_rate"))) for w in WHO),
            *(_fmt(p.median(w, _cpu("record")), ".2f") for w in WHO),
            f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-",
            p.status(),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Growth of p99 with the rate:", ""]
    for who in WHO:
        known = [(p.x, p.median(who, lambda r: r.get("p99"))) for p in points]
        known = [(x, v) for x, v in known if v]
        if len(known) >= 2:
            lines.append(
                f"- {who}: p99 {known[0][1]:.2f} ms at {known[0][0]:,}/s -> {known[-1][1]:.2f} ms at {known[-1][0]:,}/s"
            )
    return lines


def _run_line(meta: dict[str, Any]) -> str:
    v = meta["versions"]
    return (
        f"Run {meta['date']} ({meta['minutes']:.0f} min), {meta['rounds']} round(s) per point, "
        f"`{meta['command']}`; broker: {meta['broker']}; host load average (1 min) "
        f"{meta['load'][0]:.1f}-{meta['load'][1]:.1f} on {meta['machine']}; "
        + ", ".join(
            f"{k} {val}" for k, val in v.items() if k in ("kafkawire", "confluent-kafka", "librdkafka", "python")
        )
    )


def render_scale(curves: list[Curve], points: list[Point], meta: dict[str, Any]) -> str:
    run_line = _run_line(meta)
    out = []
    for curve in curves:
        mine = [p for p in points if p.curve == curve.name]
        if not mine:
            continue
        out += [f"## {curve.name}", "", run_line, "", f"![{curve.name}](scale-{curve.name}.png)", ""]
        out += _latency_section(curve, mine) if curve.name == "latency" else _throughput_section(curve, mine)
        out.append("")
    return "\n".join(out)


HEADER = """# Scale curves

`python -m bench scale` (bench/scale.py): kafkawire against confluent-kafka as the work grows, each
run in its own process on a fresh topic, the two clients alternating (kafkawire, confluent-kafka,
kafkawire, ...), medians over rounds. Produce runs: 100 B values (the size curve: its own), linger
5 ms, 1 MB batches, acks=1, a delivery report per record, verified by reading the topic back.
Consume runs: the records written before the clock, every partition assigned from the beginning,
no group; the topics curve's consumer joins a group (the join is inside its clock). CPU is the
client process's (all threads) over its clock; broker CPU is the broker's JVM (with ZooKeeper)
over the same clock; "x confluent" is kafkawire's rate over confluent-kafka's. The host is shared
(2 cores): the load average before each run is shown. The members section is
`python -m bench.rebalance`'s (its definitions above its table).
"""


def merge_sections(old: str, new: str, ran: set[str]) -> str:
    """``old`` SCALE.md with the sections of the curves in ``ran`` replaced by ``new``'s."""
    notes = old[old.index(NOTES) :] if NOTES in old else NOTES + "\n"
    body = old[: old.index(NOTES)] if NOTES in old else old

    def sections(text: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for chunk in ("\n" + text).split("\n## ")[1:]:
            name = chunk.split("\n", 1)[0].strip()
            found[name] = "## " + chunk.rstrip() + "\n"
        return found

    kept = {k: s for k, s in sections(body).items() if k not in ran}
    merged = {**kept, **sections(new)}
    order = ["partitions", "topics", "size", "latency", "members"]
    names = sorted(merged, key=lambda n: order.index(n) if n in order else len(order))
    return HEADER + "\n" + "\n".join(merged[n] for n in names) + "\n" + notes


def write_plots(curves: list[Curve], points: list[Point], folder: Path) -> None:
    """bench/scale-<curve>.png: per series, the rate (latency: the percentiles) and the CPU per unit
    of work against x, both clients, log scales."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"kafkawire": "tab:blue", "confluent-kafka": "tab:orange"}
    for curve in curves:
        mine = [p for p in points if p.curve == curve.name]
        if not mine:
            continue
        names = list(dict.fromkeys(p.series for p in mine))
        fig, axes = plt.subplots(2, len(names), figsize=(4.2 * len(names), 6.5), squeeze=False)
        for col, name in enumerate(names):
            ps = [p for p in mine if p.series == name]
            xs = [p.x for p in ps]
            top, bottom = axes[0][col], axes[1][col]
            for who in WHO:
                if curve.name == "latency":
                    for key, style in (("p50", ":"), ("p99", "-"), ("p999", "--")):
                        ys = [p.median(who, lambda r, k=key: r.get(k)) for p in ps]
                        top.plot(xs, ys, style, marker="o", color=colours[who], label=f"{who} {key}")
                    top.set_ylabel("ms, produce -> poll()")
                else:
                    ys = [p.median(who, _rate(curve.unit)) for p in ps]
                    top.plot(xs, ys, marker="o", color=colours[who], label=who)
                    top.set_ylabel("MB/s" if curve.unit == "MB" else "records/s")
                ys = [p.median(who, _cpu(curve.unit)) for p in ps]
                bottom.plot(xs, ys, marker="o", color=colours[who], label=f"{who} (client)")
                ys = [p.median(who, _cpu(curve.unit, "broker_cpu")) for p in ps]
                if any(ys):
                    bottom.plot(xs, ys, "--", marker=".", color=colours[who], alpha=0.6, label=f"broker ({who})")
            top.set_title(name)
            bottom.set_ylabel(f"CPU us per {curve.unit}")
            for ax in (top, bottom):
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlabel(curve.x_label)
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(folder / f"scale-{curve.name}.png", dpi=80)
        plt.close(fig)


MEMBER_PHASES = ("join", "add", "leave")


def _phase(phase: str, key: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda r: r["phases"][phase][key] if "phases" in r else None


def render_members(points: list[Point], meta: dict[str, Any]) -> str:
    """The members section: per protocol, group size and phase, both clients' time to a stable
    assignment and the records that waited for it; per run, the driver's check; the growth of the
    settle time with the members."""
    lines = [
        "## members",
        "",
        _run_line(meta),
        "",
        "![members](scale-members.png)",
        "",
        "Each run: a fresh topic of 64 partitions and a fresh group of N members of one client, each in "
        "its own thread polling with a 100 ms timeout; a confluent-kafka producer in its own process "
        "writes 320 records a second round-robin over the partitions (each partition gets one every "
        "200 ms). *settle*: from the phase's action (N members subscribe; member N+1 subscribes; the "
        "first member closes) until every partition is held by exactly one live member with holdings "
        "differing by at most one (the time of the last rebalance callback that made it so). *late "
        "records*: of the records produced from 0.5 s before the action to 0.5 s before the next "
        "phase's, those first returned by a poll() more than 0.5 s after they were produced (or never); "
        "*late after ack*: the same counted from each record's delivery report (the group's share when "
        "the broker is slow to take records); *worst wait*: the longest any of them waited (how long "
        "the worst partition went unconsumed); *read twice*: records returned again (a partition moved "
        "before its offsets were committed).",
        "",
        "| protocol | members | phase | settle s kw | ck | kw / ck | late records kw | ck "
        "| late after ack kw | ck | worst wait s kw | ck | read twice kw | ck | runs |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for p in points:
        for phase in MEMBER_PHASES:
            settle = [p.median(w, _phase(phase, "settle")) for w in WHO]
            ratio = f"{settle[0] / settle[1]:.2f}" if settle[0] and settle[1] else "-"
            cells = [
                p.series,
                str(p.x),
                phase,
                *(_fmt(v, ".2f") for v in settle),
                ratio,
                *(_fmt(p.median(w, _phase(phase, "late"))) for w in WHO),
                *(_fmt(p.median(w, _phase(phase, "late_acked"))) for w in WHO),
                *(_fmt(p.median(w, _phase(phase, "worst")), ".2f") for w in WHO),
                *(_fmt(p.median(w, _phase(phase, "twice"))) for w in WHO),
                p.status(),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "The driver's check, per run (medians): the steady state's p99 wait (records produced after a "
        "phase settled, before the next) and the producer's p99 time to its delivery report over the "
        "same records (the broker's and host's share of any wait), the driver's own time after a poll() "
        "(p99, and all members' summed over the run's wall clock), the CPU of the members' process "
        "over the run (the producer runs in its own), the host's load.",
        "",
        "| protocol | members | steady p99 ms kw | ck | producer ack p99 ms kw | ck | driver p99 us kw | ck "
        "| driver share % kw | ck | members' CPU s kw | ck | load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        loads = p.loads()
        cells = [
            p.series,
            str(p.x),
            *(_fmt(p.median(w, lambda r: r.get("steady_p99"))) for w in WHO),
            *(_fmt(p.median(w, lambda r: r.get("ack_p99"))) for w in WHO),
            *(_fmt(p.median(w, lambda r: r.get("driver_p99"))) for w in WHO),
            *(
                _fmt(p.median(w, lambda r: r["driver_share"] * 100 if "driver_share" in r else None), ".2f")
                for w in WHO
            ),
            *(_fmt(p.median(w, lambda r: r.get("cpu")), ".1f") for w in WHO),
            f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Growth of the time to a stable assignment with the members (medians, from the first group of "
        "more than one member to the last: one member's join waits for nobody):",
        "",
    ]
    for protocol in dict.fromkeys(p.series for p in points):
        mine = [p for p in points if p.series == protocol]
        mine = [p for p in mine if p.x > 1] if len([p for p in mine if p.x > 1]) >= 2 else mine
        for phase in MEMBER_PHASES:
            for who in WHO:
                lines.append(f"- {protocol} {phase}, {who}: {growth(mine, who, _phase(phase, 'settle'), '', 's')}")
    return "\n".join(lines) + "\n"


def plot_members(points: list[Point], folder: Path) -> None:
    """bench/scale-members.png: per protocol, the time to a stable assignment (top) and the records
    late after their delivery report (bottom: the group's share) against the group's size, a line
    per phase and client."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"kafkawire": "tab:blue", "confluent-kafka": "tab:orange"}
    styles = {"join": "-", "add": "--", "leave": ":"}
    protocols = list(dict.fromkeys(p.series for p in points))
    fig, axes = plt.subplots(2, len(protocols), figsize=(4.6 * len(protocols), 7), squeeze=False)
    for col, protocol in enumerate(protocols):
        ps = [p for p in points if p.series == protocol]
        xs = [p.x for p in ps]
        top, bottom = axes[0][col], axes[1][col]
        for who in WHO:
            for phase in MEMBER_PHASES:
                for ax, key in ((top, "settle"), (bottom, "late_acked")):
                    ys = [p.median(who, _phase(phase, key)) for p in ps]
                    ax.plot(xs, ys, styles[phase], marker="o", color=colours[who], label=f"{who} {phase}")
        top.set_title(protocol)
        top.set_ylabel("s to a stable assignment")
        bottom.set_ylabel("records > 0.5 s late after their ack")
        for ax in (top, bottom):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("members")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(folder / "scale-members.png", dpi=80)
    plt.close(fig)
