"""The transactional consume-transform-produce copy on the three-broker Kafka 2.3 cluster (issue 39):
a group of two members per client (`tests.harness.txn_copy_member`, each a process) copies a topic
fed at a steady rate into another, read_committed, while brokers are SIGKILLed on the seeded
schedule (`tests.harness.cluster_scenarios.Faults`) and member w0 of every client is SIGKILLed
and started again (same transactional.id) at one seeded moment.

Checked per client, reading the copy read_committed with confluent-kafka (the judge):

* lost: a record fed (acknowledged to the feed) and not in the copy;
* duplicated: a source record in the copy more than once;
* reordered: in a partition of the copy, a record after one fed later to the same source partition;
* committed past copied: a source record below the group's committed offset missing from the copy;
* members died: a member process that ended by itself (a fatal error).

Noted, never asserted: the longest time without a committed transaction, how long after the feed
stopped the copy caught up, and per broker kill how long until the next transaction committed.

``python -m tests.harness.txn_copy --runs 20 --clients kafkawire`` runs it over and over on one
cluster (seeds 39, 40, ...), printing each run's verdict.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkawire.local_broker import _with_parent_death_signal
from tests.harness.cluster_scenarios import (
    CLIENTS,
    Fault,
    Faults,
    Feed,
    GroupRun,
    Verdict,
    committed,
    kill_schedule,
    leader_of,
    now,
    read_log,
    sibling_groups,
    tally_log,
)
from tests.harness.judge import LOGGER, unique_name
from tests.harness.kafka_cluster import KafkaCluster

PARTITIONS = 6
MEMBERS = ("w0", "w1")
STOP_WAIT = 45.0  # s a member has to leave after SIGTERM: its last call's timeout (30 s) and its close
ROOT = Path(__file__).resolve().parents[2]


class MemberProcess:
    """One copying member's process; its JSON-line notes go to a file read at the end."""

    def __init__(self, client: str, name: str, args: list[str], out_dir: Path) -> None:
        self.client, self.name, self._args, self._out_dir = client, name, args, out_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self.lives: list[Path] = []
        self.exits: list[int] = []  # exit codes of lives that ended by themselves

    def start(self) -> None:
        out = self._out_dir / f"{self.client}-{self.name}-{len(self.lives)}.jsonl"
        self.lives.append(out)
        with open(out, "wb") as f, open(out.with_suffix(".err"), "wb") as err:  # (debug lines: stderr)
            self.proc = subprocess.Popen(
                _with_parent_death_signal([sys.executable, "-m", "tests.harness.txn_copy_member", *self._args]),
                cwd=ROOT,
                stdout=f,
                stderr=err,
                env={
                    **os.environ,
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                },
            )

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def terminate(self) -> None:
        """SIGTERM: the member finishes its open transaction and leaves (``stop`` waits for it)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def stop(self, deadline: float) -> None:
        """Wait until ``deadline`` (monotonic) for the member to leave, then SIGKILL it."""
        assert self.proc is not None
        try:
            self.proc.wait(max(0.0, deadline - now()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.exits.append(-9)
            return
        if self.proc.returncode:
            self.exits.append(self.proc.returncode)

    def overran(self) -> bool:
        """A transactional call of this member ran past its timeout (librdkafka #5456/#5511)."""
        return any(e["ev"] == "overran" for e in self.notes())

    def check_alive(self) -> None:
        """A life that ended by itself is noted and the member started again."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            self.exits.append(self.proc.returncode)
            self.start()

    def has_partitions(self) -> bool:
        return any(e["ev"] == "assign" and e["partitions"] for e in self.notes())

    def notes(self) -> list[dict[str, Any]]:
        events = []
        for life, path in enumerate(self.lives):
            for line in path.read_text(errors="replace").splitlines():
                if line.startswith('{"t"'):
                    events.append({**json.loads(line), "member": self.name, "life": life})
        return events


@dataclass
class CopyRun:
    client: str
    source: str
    dest: str
    group: str
    feed: GroupRun
    members: list[MemberProcess] = field(default_factory=list)


def check_copy(
    run: CopyRun,
    copy: dict[int, list[tuple[int, bytes]]],
    offsets: dict[int, int],
    faults: list[Fault],
    fed_until: float,
) -> Verdict:
    fed = run.feed.fed  # index -> (source partition, offset, sent at)
    seen, reordered = tally_log(copy)
    copied = set(seen)
    counts = {
        "lost": sum(1 for index in fed if index not in copied),
        "duplicated": sum(n - 1 for n in seen.values() if n > 1),
        "reordered": len(reordered),
        "committed past copied": sum(
            1 for index, (p, o, _t) in fed.items() if o is not None and o < offsets.get(p, -1) and index not in copied
        ),
        "members died": sum(len(m.exits) for m in run.members),
    }
    events = sorted((e for m in run.members for e in m.notes()), key=lambda e: e["t"])
    commits = [e["t"] for e in events if e["ev"] == "commit"]
    gaps = [b - a for a, b in itertools.pairwise(commits)]
    recovery: list[float | None] = []
    for fault in faults:
        later = [t for t in commits if t > fault.started]
        recovery.append(later[0] - fault.started if later else None)
    notes: dict[str, Any] = {
        "fed": len(fed),
        "transactions": len(commits),
        "aborts": sum(1 for e in events if e["ev"] == "abort"),
        "longest commit gap s": round(max(gaps), 1) if gaps else None,
        "caught up after feed s": round(max(commits) - fed_until, 1) if commits else None,
        "errors": sorted({e["error"] for e in events if "error" in e}),
    }
    overran = sorted({e["call"] for e in events if e["ev"] == "overran"})
    if overran:
        notes["calls past their timeout"] = overran
    if counts["duplicated"] or counts["lost"] or counts["reordered"]:
        story = run.members[0].lives[0].parent / f"{run.client}-story.txt"
        story.write_text("\n".join(_story(events, copy, seen)) + "\n")
        notes["story"] = str(story)
    return Verdict(run.client, counts, recovery, notes)


def _story(events: list[dict[str, Any]], copy: dict[int, list[tuple[int, bytes]]], seen: dict[int, int]) -> list[str]:
    """Where the first duplicated records sit in the copy, and every member event (for the report)."""
    doubled = {i for i, n in seen.items() if n > 1}
    where = sorted((p, o, int(v)) for p, records in copy.items() for o, v in records if int(v) in doubled)[:10]
    lines = [f"duplicated (partition, offset, value): {where}"]
    for e in events:
        rest = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("t", "ev", "member", "life"))
        lines.append(f"{e['t']:.2f} {e['member']}#{e['life']} {e['ev']} {rest}")
    return lines


def run_copy_scenario(
    cluster: KafkaCluster,
    seed: int,
    *,
    clients: tuple[str, ...] = tuple(CLIENTS),
    duration: float = 45.0,
    rate: float = 200.0,
    broker_kills: int = 4,
    catch_up: float = 150.0,
    keep_notes: bool = False,
    faults_for: Callable[[dict[str, str]], list[Fault]] | None = None,
    kill_member: bool = True,
) -> list[Verdict]:
    """Feed each client's source topic at ``rate`` for ``duration`` s while its two members copy;
    brokers are killed on the schedule of ``seed`` (or ``faults_for(groups)`` happen: client name ->
    its group) and member w0 is SIGKILLed once and started again 3 s later (unless not
    ``kill_member``); then wait until each group committed the end of its source, and check."""
    rng = random.Random(seed)
    groups = sibling_groups(clients, "txn-copy")
    out_dir = Path(tempfile.mkdtemp(prefix="kafkawire-txncopy-"))
    runs: dict[str, CopyRun] = {}
    for name in clients:
        tag = name.split("-")[0]
        source, dest = unique_name(f"copy-src-{tag}"), unique_name(f"copy-dst-{tag}")
        cluster.create_topic(source, PARTITIONS)
        cluster.create_topic(dest, PARTITIONS)
        run = CopyRun(name, source, dest, groups[name], GroupRun(name, source, groups[name]))
        for member_name in MEMBERS:
            args = [name, cluster.bootstrap(), run.group, source, dest, f"{run.group}-{member_name}"]
            run.members.append(MemberProcess(name, member_name, args, out_dir))
        runs[name] = run
    for run in runs.values():
        for member in run.members:
            member.start()
    deadline = now() + 60  # faults strike a copy under way, not the members' start
    while now() < deadline and not all(m.has_partitions() for run in runs.values() for m in run.members):
        time.sleep(0.2)
    sources = [run.source for run in runs.values()]
    faults = (
        faults_for(groups)
        if faults_for is not None
        else [
            Fault(at, "kill", leader_of(range(PARTITIONS), seed + i))
            for i, at in enumerate(kill_schedule(seed, broker_kills))
        ]
    )
    member_kill_at, member_back_after = rng.uniform(10.0, duration - 10.0), 3.0
    if not kill_member:
        member_kill_at = float("inf")
    feeds = [Feed(cluster.judge_bootstrap(), run.source, rate, run.feed) for run in runs.values()]
    player = Faults(cluster, faults, sources)
    start = now()
    player.run(start)
    killed_at: float | None = None
    back = False
    while now() < start + duration:
        if killed_at is None and now() >= start + member_kill_at:
            killed_at = now()
            LOGGER.warning("member w0 SIGKILLed at %.1f s", killed_at - start)
            for run in runs.values():
                run.members[0].kill()
        elif killed_at is not None and not back and now() >= killed_at + member_back_after:
            back = True
            for run in runs.values():
                run.members[0].start()
        elif killed_at is None or back:
            for run in runs.values():
                for member in run.members:
                    member.check_alive()
        time.sleep(0.05)
    fed_until = now()
    for feed in feeds:
        feed.join()
    player.join()
    ends = {name: _source_ends(run) for name, run in runs.items()}
    deadline = now() + catch_up
    while now() < deadline:
        # a client whose member's call overran its timeout is stuck in it for good (the judge's
        # send_offsets_to_transaction, contributing/judges.md): its copy cannot catch up, so not waited for
        waited = {name: run for name, run in runs.items() if not any(m.overran() for m in run.members)}
        caught = {
            name: committed(cluster.judge_bootstrap(), run.group, run.source, PARTITIONS)
            for name, run in waited.items()
        }
        if all(caught[name][p] >= end for name in waited for p, end in ends[name].items() if end):
            break
        for run in runs.values():
            for member in run.members:
                member.check_alive()
        time.sleep(1.0)
    members = [member for run in runs.values() for member in run.members]
    for member in members:  # all at once: a member's last transaction may take its whole call timeout
        if member.overran():  # stuck in a call, it would not hear SIGTERM (`stop` notes the kill)
            member.kill()
        else:
            member.terminate()
    leave_by = now() + STOP_WAIT
    for member in members:
        member.stop(leave_by)
    verdicts = []
    for run in runs.values():
        copy = read_log(cluster.judge_bootstrap(), run.dest, PARTITIONS)
        offsets = committed(cluster.judge_bootstrap(), run.group, run.source, PARTITIONS)
        verdicts.append(check_copy(run, copy, offsets, faults, fed_until))
        if killed_at is not None:
            verdicts[-1].notes["member w0 killed at s"] = round(killed_at - start, 1)
    _delete_topics(cluster, [t for run in runs.values() for t in (run.source, run.dest)])
    if keep_notes:
        verdicts[-1].notes["member notes"] = str(out_dir)
    elif not any("story" in v.notes for v in verdicts):
        shutil.rmtree(out_dir, ignore_errors=True)
    return verdicts


def _delete_topics(cluster: KafkaCluster, topics: list[str]) -> None:
    """Run after run on one cluster, a restarted broker would load ever more logs (minutes)."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": cluster.judge_bootstrap(), "log_level": 0})
    for future in admin.delete_topics(topics, operation_timeout=30).values():
        future.result(60)


def _source_ends(run: CopyRun) -> dict[int, int]:
    """Each source partition's end (one past its last fed record's offset; 0 when none)."""
    ends = dict.fromkeys(range(PARTITIONS), 0)
    for p, o, _t in run.feed.fed.values():
        if o is not None and o >= 0:  # (a report without an offset: the feed's judge gave none)
            ends[p] = max(ends[p], o + 1)
    return ends


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--clients", default="kafkawire", help="comma-separated: kafkawire,confluent-kafka")
    args = parser.parse_args()
    clients = tuple(args.clients.split(","))
    with KafkaCluster() as cluster:
        for i in range(args.runs):
            begun = time.monotonic()
            verdicts = run_copy_scenario(cluster, args.seed + i, clients=clients, keep_notes=True)
            took = time.monotonic() - begun
            for v in verdicts:
                print(f"run {i + 1} seed {args.seed + i} {took:.0f} s: {v.line()}", flush=True)
            for node in range(cluster.size):
                if not cluster.alive(node):
                    cluster.restart(node)


if __name__ == "__main__":
    main()
