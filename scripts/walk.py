"""Walk a value through the code: which of kafkawire's modules one produced value and one fetched
record pass through, in order, from the application's call to the bytes and back.

``python scripts/walk.py [--src DIR]``: on kafkawire's own mock cluster (``test.mock.num.brokers``),
a producer's ``produce()`` + ``flush()`` of one record, then a consumer's ``poll()`` until it returns
that record, from the Fetch that brings it. Python's profiler hook records every kafkawire function entered on the clients' threads
(the C lane's work shows as the Python it calls; the mock cluster is left out). Prints, per walk, the
modules crossed in the order first entered and how many. ``--src`` walks another
checkout's ``src`` (an older commit, to compare a change's before and after).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

WALKER = r"""
import sys, threading, uuid
import kafkawire
from kafkawire.testing import MockCluster
root = kafkawire.__file__.rsplit("/", 1)[0] + "/"
steps = []
recording = []
ignored = set()  # the producer's threads, while the fetch is walked

def hook(frame, event, arg):
    if event != "call" or not recording or threading.get_ident() in ignored:
        return
    path = frame.f_code.co_filename
    if path.startswith(root) and not path.startswith(root + "testing/"):
        name = path[len(root):].removesuffix(".py").replace("/", ".")
        if not steps or steps[-1] != name:
            steps.append(name)

def walk(label, fn):
    steps.clear()
    recording.append(True)
    try:
        fn()
    finally:
        recording.clear()
    crossed = list(dict.fromkeys(steps))
    print(label, len(crossed), " > ".join(crossed))

threading.setprofile(hook)  # every thread started from here on: the clients' IO threads
sys.setprofile(hook)
cluster = MockCluster(1)
conf = {"bootstrap.servers": cluster.bootstrap_servers()}
topic = "walk-" + uuid.uuid4().hex[:6]
cluster.create_topic(topic)
producer = kafkawire.Producer(dict(conf, **{"linger.ms": 0}))
producer.produce(topic, b"warm-up")
producer.flush(10)
producer_threads = [t for t in threading.enumerate() if t is not threading.main_thread()]
walk("produce", lambda: (producer.produce(topic, b"walked"), producer.flush(10)))
consumer = kafkawire.Consumer(dict(conf, **{"group.id": topic, "auto.offset.reset": "earliest"}))
consumer.assign([kafkawire.TopicPartition(topic, 0, 0)])
seen = []
def poll():
    while len(seen) < 2:
        m = consumer.poll(1)
        if m is not None and not m.error():
            seen.append(m.value())
poll()  # the warm-up record: the connection, the handshake and the fetch session are set up
seen.clear()
main = threading.get_ident()
ignored.update(t.ident for t in producer_threads)
def fetch():
    ignored.add(main)
    producer.produce(topic, b"fetched")
    producer.flush(10)
    ignored.discard(main)
    seen.append(None)
    poll()
walk("fetch", fetch)
assert seen == [None, b"fetched"], seen
consumer.close()
producer.close() if hasattr(producer, "close") else None
cluster.close()
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=os.path.join(os.path.dirname(__file__), "..", "src"))
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.src))
    out = subprocess.run([sys.executable, "-c", WALKER], env=env, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        label, count, path = line.split(" ", 2)
        print(f"## {label}: {count} modules\n{path}\n")


if __name__ == "__main__":
    main()
