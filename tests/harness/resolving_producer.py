"""A producer in a process whose name lookups a hosts file of the test's answers (nss_wrapper:
Debian's libnss-wrapper, preloaded; the machine's /etc/hosts untouched), for a bootstrap name that
resolves to several addresses (issue 53, `client.dns.lookup`). `run_resolving_producer` starts it.

    python -m tests.harness.resolving_producer CLIENT BOOTSTRAP TOPIC COUNT

It produces COUNT records (values 0..COUNT-1, idempotent, acks=all), flushes, and prints one JSON
line: the records delivered and failed (with their codes), seconds to the first and the last
delivery report, and what error_cb heard.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

NSS_WRAPPER = Path("/usr/lib/x86_64-linux-gnu/libnss_wrapper.so")
WAIT = 120.0


def run_resolving_producer(
    client: str, name: str, addresses: Iterable[str], port: int, topic: str, count: int
) -> dict[str, Any]:
    """Run the producer of ``client`` with ``name`` resolving to ``addresses`` (in that order) and
    bootstrap ``name:port``; its JSON line."""
    if not NSS_WRAPPER.exists():
        raise RuntimeError(f"{NSS_WRAPPER} is missing: apt-get install libnss-wrapper (make system-deps)")
    with tempfile.NamedTemporaryFile("w", suffix=".hosts") as hosts:
        hosts.write("".join(f"{address} {name}\n" for address in addresses))
        hosts.flush()
        env = {
            **os.environ,
            "LD_PRELOAD": str(NSS_WRAPPER),
            "NSS_WRAPPER_HOSTS": hosts.name,
            "NSS_WRAPPER_PASSWD": "/etc/passwd",
            "NSS_WRAPPER_GROUP": "/etc/group",
        }
        argv = [sys.executable, "-m", "tests.harness.resolving_producer", client, f"{name}:{port}", topic, str(count)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=WAIT + 60, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{client} producer exited {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(lines[-1])


def main(argv: list[str]) -> None:
    client, bootstrap, topic, count = argv[0], argv[1], argv[2], int(argv[3])
    m = importlib.import_module("confluent_kafka" if client == "confluent-kafka" else "kafkawire")
    heard: list[str] = []
    reports: list[float] = []
    failed: list[str] = []
    producer = m.Producer(
        {
            "bootstrap.servers": bootstrap,
            "enable.idempotence": True,
            "linger.ms": 5,
            "error_cb": lambda err: heard.append(err.name()),
        }
    )

    def report(err: Any, _msg: Any) -> None:
        reports.append(time.monotonic())
        if err is not None:
            failed.append(err.name())

    start = time.monotonic()
    for n in range(count):
        producer.produce(topic, str(n).encode(), on_delivery=report)
        producer.poll(0)
    left = producer.flush(WAIT)
    close = getattr(producer, "close", None)
    if close is not None:
        close(10)
    first = min(reports) - start if reports else None
    last = max(reports) - start if reports else None
    out = {"delivered": len(reports) - len(failed), "failed": failed, "unflushed": left, "first s": first}
    print(json.dumps({**out, "last s": last, "error_cb": sorted(set(heard))}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
