"""What one ``poll()`` costs per record with every record already buffered: kafkawire against
confluent-kafka, in callgrind instructions and in the main thread's CPU time.

``python -m bench.poll_cost [--callgrind] [--clients confluent-kafka,kafkawire]``: starts Tansu,
writes ``--records`` 100 B values to a 4-partition topic, then per client runs a reader process that
assigns every partition from the beginning, waits ``--settle`` s for the prefetch (the fetch
queue is made large enough to hold every record), runs ``--warmup`` polls, then the measured
``--polls`` polls in one ``eval()``. With ``--callgrind`` the reader runs twice under ``valgrind
--tool=callgrind --collect-atstart=no --toggle-collect=builtin_eval --separate-threads=yes``, with
``--polls`` and with a tenth of them: the difference divided by the difference in polls is what one
more record costs, per thread (the main thread is the poll loop itself; the others are whatever the
client's own threads did meanwhile; the toggle is per thread, so they show only what ran on them
while the main thread was in the loop: nothing, unless they were woken), printed per thread and
summed. (``exec`` would not do as the toggle: runpy and every import run their module through it.) Without it the reader prints ``time.thread_time()`` per record over the loop; with ``--whole``,
the process's CPU time (every thread) from ``assign()`` to the last of ``--polls`` records, the
fetching and decoding included, no prefetch wait.
Not a test: a measuring tool for bench/PROFILE.md.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import uuid

LOOP = """
_n = 0
_poll = consumer.poll
while _n < polls:
    _m = _poll(5.0)
    if _m is None or _m.error() is not None:
        raise RuntimeError(f"poll() gave {_m!r} after {_n} records")
    _n += 1
"""


def reader(client: str, bootstrap: str, topic: str, settle: float, warmup: int, polls: int) -> None:
    """The reader process: assign, wait for the prefetch, warm up, run the measured loop."""
    import time

    if client == "confluent-kafka":
        import confluent_kafka as lib

        extra: dict[str, object] = {"enable.metrics.push": False, "broker.address.family": "v4"}
    else:
        import kafkawire as lib  # type: ignore[no-redef]

        extra = {}
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": f"poll-cost-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "queued.max.messages.kbytes": 2_000_000,
        "queued.min.messages": 10_000_000,
        **extra,
    }
    consumer = lib.Consumer(conf)
    parts = sorted(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
    if settle < 0:  # the whole process from assign() to the last record: fetching and decoding included
        code = compile(LOOP, "<poll loop>", "exec")
        cpu = time.process_time()
        consumer.assign([lib.TopicPartition(topic, p, -2) for p in parts])
        exec(code, {"consumer": consumer, "polls": polls})
        cpu = time.process_time() - cpu
        print(f"whole-process CPU {cpu / polls * 1e6:.3f} us per record (assign to the last record)")
        consumer.close()
        return
    consumer.assign([lib.TopicPartition(topic, p, -2) for p in parts])
    first = consumer.poll(60)
    if first is None or first.error() is not None:
        raise RuntimeError(f"first poll() gave {first!r}")
    time.sleep(settle)
    code = compile(LOOP, "<poll loop>", "exec")
    namespace = {"consumer": consumer, "polls": warmup}
    exec(code, namespace)  # the warm-up: not counted (callgrind toggles on builtin_eval only)
    namespace["polls"] = polls
    cpu = time.thread_time()
    eval(code, namespace)
    cpu = time.thread_time() - cpu
    print(f"main-thread CPU {cpu / polls * 1e6:.3f} us per record")
    consumer.close()


def fill(bootstrap: str, topic: str, records: int) -> None:
    import confluent_kafka
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, 4, 1)]).values():
        future.result(30)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    value = b"v" * 100
    for i in range(records):
        while True:
            try:
                producer.produce(topic, value, partition=i % 4)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(60):
        raise RuntimeError("records left unflushed")


def instructions(out_dir: str) -> dict[str, int]:
    """Instructions per thread, from callgrind's per-thread output files."""
    per_thread: dict[str, int] = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "callgrind.out.*"))):
        with open(path) as f:
            text = f.read()
        summary = re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)", text, re.M)
        thread = re.search(r"^thread:\s+(\d+)", text, re.M)
        if summary:
            per_thread[f"thread {thread.group(1) if thread else '?'}"] = int(summary.group(1))
    return per_thread


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="confluent-kafka,kafkawire")
    parser.add_argument("--records", type=int, default=12_000)
    parser.add_argument("--warmup", type=int, default=1_000)
    parser.add_argument("--polls", type=int, default=10_000)
    parser.add_argument(
        "--settle", type=float, default=None, help="s to wait for the prefetch (default 3, 30 under callgrind)"
    )
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument(
        "--whole", action="store_true", help="CPU of the whole process from assign() to the last of --polls records"
    )
    parser.add_argument("--bootstrap-servers")
    parser.add_argument("--topic")
    parser.add_argument("--reader", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    settle = args.settle if args.settle is not None else (30.0 if args.callgrind else 3.0)
    if args.whole:
        settle = -1.0
    if args.reader:
        reader(args.reader, args.bootstrap_servers, args.topic, settle, args.warmup, args.polls)
        return 0
    if args.warmup + args.polls >= args.records:
        parser.error("--records must exceed --warmup + --polls (+1 for the first poll)")

    from kafkawire.local_broker import TansuBroker

    with TansuBroker() as tansu:
        topic = f"poll-cost-{uuid.uuid4().hex[:8]}"
        fill(tansu.bootstrap, topic, args.records)
        for client in args.clients.split(","):
            cmd = [sys.executable, "-m", "bench.poll_cost", "--reader", client, "--bootstrap-servers", tansu.bootstrap]
            cmd += ["--topic", topic, "--settle", str(settle), "--warmup", str(args.warmup), "--polls", str(args.polls)]
            if not args.callgrind:
                out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
                print(f"{client}: {out.strip()}")
                continue
            runs = []
            for polls in (args.polls // 10, args.polls):
                with tempfile.TemporaryDirectory() as out_dir:
                    grind = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=builtin_eval"]
                    grind += ["--separate-threads=yes", f"--callgrind-out-file={out_dir}/callgrind.out.%p"]
                    counted = [*cmd[:-1], str(polls)]
                    subprocess.run(grind + counted, check=True, capture_output=True)
                    runs.append(instructions(out_dir))
            fewer, more = runs
            spread = args.polls - args.polls // 10
            per_thread = {t: (n - fewer.get(t, 0)) / spread for t, n in more.items()}
            shown = ", ".join(f"{t} {n:,.0f}" for t, n in per_thread.items() if abs(n) >= 1)
            print(f"{client}: {sum(per_thread.values()):,.0f} instructions per record (all threads; {shown})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
