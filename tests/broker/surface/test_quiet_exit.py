"""A quiet exit (issue 37): a program that exits without closing its clients prints nothing on
stderr that confluent-kafka does not print.

The same program runs on both clients in a child interpreter: a producer (its records
delivered), a group consumer that subscribed and polled, an admin client; none closed. Either
the broker stays up (the session's Tansu), or the program started its own broker, which stops at
exit while the clients still hold connections (a test harness' life). confluent-kafka writes only
librdkafka's log lines there (``%<level>|...``, the connections it sees close); kafkawire must
write nothing: its warnings go to its loggers, and the application configured none.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from kafkawire.local_broker import TansuBroker

pytestmark = pytest.mark.broker

PROGRAM = textwrap.dedent(
    """
    import sys, uuid
    client, kind, bootstrap = sys.argv[1:4]
    if bootstrap == "own":
        from kafkawire.local_broker import TansuBroker
        broker = TansuBroker()
        broker.start()  # stopped by its atexit hook, the clients still connected
        bootstrap = broker.bootstrap
    if client == "confluent-kafka":
        import confluent_kafka as ck
        from confluent_kafka.admin import AdminClient
    else:
        import kafkawire as ck
        from kafkawire.admin import AdminClient
    conf = {"bootstrap.servers": bootstrap}
    topic = "quiet-" + uuid.uuid4().hex[:8]
    if kind == "producer":
        p = ck.Producer(conf)
        p.produce(topic, b"x")
        assert p.flush(30) == 0
    elif kind == "consumer":
        c = ck.Consumer({**conf, "group.id": "g-" + topic, "auto.offset.reset": "earliest"})
        c.subscribe([topic])
        c.poll(2)
    else:
        a = AdminClient(conf)
        a.list_topics(timeout=10)
    print("done", flush=True)
    """
)
LIBRDKAFKA_LOG = re.compile(r"^%\d\|")


def _run(client: str, kind: str, bootstrap: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, client, kind, bootstrap], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    return done.stderr


@pytest.mark.parametrize("broker", ["shared", "own"], ids=["broker-up", "broker-stops-at-exit"])
@pytest.mark.parametrize("kind", ["producer", "consumer", "admin"])
def test_exit_without_close_prints_only_what_confluent_prints(tansu: TansuBroker, kind: str, broker: str) -> None:
    bootstrap = tansu.bootstrap if broker == "shared" else "own"
    theirs = _run("confluent-kafka", kind, bootstrap)
    ours = _run("kafkawire", kind, bootstrap)
    # confluent-kafka's stderr: librdkafka's own log lines at most, never a line of its Python layer.
    assert all(LIBRDKAFKA_LOG.match(line) for line in theirs.splitlines()), theirs
    assert ours == ""
