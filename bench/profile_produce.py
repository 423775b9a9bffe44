"""Profile one client's run with py-spy (all threads):
``python -m bench.profile_produce [client] [records] [scenario] [partitions] [broker]``.

Starts Tansu (or ``kafka23``: the tests' Kafka 2.3), creates a topic (4 partitions unless told), runs `bench.worker` under ``py-spy record --gil`` (only samples of
the thread holding the GIL: where the interpreter's time really goes) and prints where they fall: per thread, then the functions with the most samples of their own ("self") and
including callees ("total"). Needs ``py-spy`` (``pip install py-spy``); the raw profile is kept
in bench/profile-<client>.txt (collapsed stacks) for flame graphs.
"""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
import sys
from pathlib import Path

from bench.run import ROOT, broker, create_topic
from bench.scenarios import parse_scenario


def summarise(collapsed: Path, top: int = 30) -> str:
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = stack.split(";")
        samples += count
        threads[frames[0]] += count
        own[frames[-1]] += count
        for frame in set(frames[1:]):
            total[frame] += count
    out = [f"{samples} samples"]
    out += ["", "by thread:"] + [f"  {n / samples:6.1%}  {t}" for t, n in threads.most_common()]
    out += ["", "self:"] + [f"  {n / samples:6.1%}  {f}" for f, n in own.most_common(top)]
    out += ["", "total:"] + [f"  {n / samples:6.1%}  {f}" for f, n in total.most_common(top)]
    return "\n".join(out)


def main() -> None:
    client = sys.argv[1] if len(sys.argv) > 1 else "kafkawire-produce"
    records = int(sys.argv[2]) if len(sys.argv) > 2 else 500_000
    scenario = sys.argv[3] if len(sys.argv) > 3 else "100b-keyless-acks1-none"
    partitions = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    kind = sys.argv[5] if len(sys.argv) > 5 else "tansu"
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")

    with broker(None, False, kind) as target:
        topic = "bench-profile"
        create_topic(target.bootstrap, topic, partitions)
        spec = {
            "client": client,
            "scenario": parse_scenario(scenario, False).to_json(),
            "bootstrap": target.bootstrap,
            "topic": topic,
            "records": records,
        }
        raw = ROOT / "bench" / f"profile-{client}.txt"
        subprocess.run(
            [
                py_spy,
                "record",
                "--threads",
                "--gil",
                "--rate",
                "250",
                "--format",
                "raw",
                "--output",
                str(raw),
                "--",
                sys.executable,
                "-m",
                "bench.worker",
                json.dumps(spec),
            ],
            cwd=ROOT,
            check=True,
        )
    print(summarise(raw))


if __name__ == "__main__":
    main()
