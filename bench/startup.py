"""Start-up: ``import <client>`` and ``Producer({...})`` in a fresh process, kafkawire against
confluent-kafka (issue 49's target: within 1.5x).

``python -m bench.startup [--runs 20] [--run-alias]``: each run starts one fresh interpreter per
client, alternating which goes first, and times (in the child, with ``time.perf_counter``) the
import and the construction of a producer whose bootstrap address refuses connections (nothing
waits for a broker; librdkafka's constructor does not either). It also counts the modules the child
imported. ``--run-alias`` adds ``python -m kafkawire.run`` over a script doing confluent-kafka's
steps, timed from the parent (interpreter start included, against ``python script.py`` with
confluent-kafka). Prints medians and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_RATIO = 1.5
CLIENTS = {"confluent-kafka": "confluent_kafka", "kafkawire": "kafkawire"}
CHILD = """
import json, sys, time
t0, c0 = time.perf_counter(), time.process_time()
import {module} as client
p = client.Producer({{"bootstrap.servers": "127.0.0.1:9", "log_level": 0}})
t1, c1 = time.perf_counter(), time.process_time()
print(json.dumps({{"seconds": t1 - t0, "cpu": c1 - c0, "modules": len(sys.modules)}}))
"""
SCRIPT = 'import confluent_kafka\nconfluent_kafka.Producer({"bootstrap.servers": "127.0.0.1:9", "log_level": 0})\n'


# As on a user's machine, where pip compiled the modules when it installed them: the children read
# bytecode that the warm-up run wrote (a process started with PYTHONDONTWRITEBYTECODE, as CI
# shells may be, would compile kafkawire's ~300 modules from source at every start).
CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def in_child(module: str) -> dict[str, float]:
    """One fresh interpreter: the seconds ``import`` + ``Producer()`` took, and the modules loaded
    (measured in the child), and the whole process's seconds, interpreter start and exit included
    (measured here: what a command-line call or a worker's cold start pays)."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(module=module)],
        check=True,
        capture_output=True,
        text=True,
        env=CHILD_ENV,
    ).stdout
    whole = time.perf_counter() - t0
    return {**json.loads(out.strip().splitlines()[-1]), "whole": whole}


def whole_process(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=CHILD_ENV)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--run-alias", action="store_true", help="also time python -m kafkawire.run")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in CLIENTS}
    cpu: dict[str, list[float]] = {name: [] for name in CLIENTS}
    whole: dict[str, list[float]] = {name: [] for name in CLIENTS}
    modules: dict[str, float] = {}
    for name in CLIENTS:  # one uncounted run each: the files are in the page cache and compiled
        in_child(CLIENTS[name])
    for run in range(args.runs):
        order = list(CLIENTS) if run % 2 == 0 else list(reversed(CLIENTS))
        for name in order:
            result = in_child(CLIENTS[name])
            times[name].append(result["seconds"])
            cpu[name].append(result["cpu"])
            whole[name].append(result["whole"])
            modules[name] = result["modules"]
    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    whole_medians = {name: statistics.median(values) for name, values in whole.items()}
    for name in CLIENTS:
        print(
            f"{name:16} import + Producer(): median {medians[name] * 1000:7.1f} ms"
            f" ({cpu_medians[name] * 1000:.1f} ms CPU), {modules[name]:.0f} modules;"
            f" whole process {whole_medians[name] * 1000:.1f} ms"
        )
    ratio = medians["kafkawire"] / medians["confluent-kafka"]
    cpu_ratio = cpu_medians["kafkawire"] / cpu_medians["confluent-kafka"]
    whole_ratio = whole_medians["kafkawire"] / whole_medians["confluent-kafka"]
    print(
        f"ratio kafkawire / confluent-kafka: {ratio:.2f}x, CPU {cpu_ratio:.2f}x,"
        f" whole process {whole_ratio:.2f}x (target <= {TARGET_RATIO}x)"
    )
    if args.run_alias:
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "program.py")
            with open(script, "w") as f:
                f.write(SCRIPT)
            plain, alias = [], []
            for _ in range(args.runs):
                plain.append(whole_process([sys.executable, script]))
                alias.append(whole_process([sys.executable, "-m", "kafkawire.run", script]))
        p, a = statistics.median(plain), statistics.median(alias)
        print(f"python program.py (confluent-kafka): {p * 1000:.1f} ms")
        print(f"python -m kafkawire.run program.py:  {a * 1000:.1f} ms ({a / p:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
