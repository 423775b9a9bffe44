"""One member of the transactional copy (`tests.harness.txn_copy`), as a process of its own so the
scenario can SIGKILL it: a read_committed consumer in a group and a transactional producer whose
``transactional.id`` is the member's name (a restarted member fences the one it replaces).

    python -m tests.harness.txn_copy_member CLIENT BOOTSTRAP GROUP SOURCE DEST TRANSACTIONAL_ID

It copies each source record to the same partition of DEST, up to ``BATCH`` records per
transaction, the consumed positions sent with the transaction; an open transaction is finished in
on_revoke and thrown away in on_lost. An abortable failure aborts and rewinds the consumer to the
group's committed offsets; a retriable one is retried; a fatal one ends the process (exit 3).
SIGTERM finishes the open transaction and leaves. A transactional call still running ``OVERRUN`` s
past its own timeout is noted (``overran``). Each step is a JSON line on stdout;
``KAFKAWIRE_TXNCOPY_DEBUG`` sets both clients' ``debug`` contexts (their lines go to stderr).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any

BATCH = 100
TIMEOUT = 30.0

STALL = 10.0  # s without a note after which the threads' stacks are written out (once per stall)
OVERRUN = 10.0  # s past its own timeout after which a client call is noted as overrunning it

stop = threading.Event()
last_note = [time.monotonic()]
calling: list[tuple[str, float] | None] = [None]  # the transactional call under way, since when


def note(event: str, **fields: Any) -> None:
    last_note[0] = time.monotonic()
    print(json.dumps({"t": last_note[0], "ev": event, **fields}), flush=True)


def watchdog() -> None:
    """Where every thread is when the member has noted nothing for ``STALL`` s (for the report)."""
    dumped = 0.0
    overran: tuple[str, float] | None = None
    while not stop.wait(1.0):
        call = calling[0]
        if call is not None and call != overran and time.monotonic() - call[1] > TIMEOUT + OVERRUN:
            overran = call  # librdkafka's send_offsets_to_transaction can (contributing/judges.md)
            note("overran", call=call[0], timeout=TIMEOUT)
        if time.monotonic() - last_note[0] > STALL and dumped != last_note[0]:
            dumped = last_note[0]
            names = {t.ident: t.name for t in threading.enumerate()}
            lines = [f"--- stalled {time.monotonic() - dumped:.1f} s at {time.monotonic():.2f}"]
            for ident, frame in sys._current_frames().items():
                lines.append(f"thread {names.get(ident, ident)}:")
                lines += [line.rstrip() for line in traceback.format_stack(frame)[-8:]]
            print("\n".join(lines), file=sys.stderr, flush=True)


class Copier:
    def __init__(self, client: str, bootstrap: str, group: str, source: str, dest: str, txn_id: str) -> None:
        self.m = importlib.import_module("confluent_kafka" if client == "confluent-kafka" else "kafkawire")
        self.source, self.dest = source, dest
        common = {
            "bootstrap.servers": bootstrap,
            "broker.address.family": "v4",
            "enable.metrics.push": False,
            "error_cb": lambda err: note("error_cb", error=err.name(), fatal=err.fatal()),
        }
        if os.environ.get("KAFKAWIRE_TXNCOPY_DEBUG"):  # librdkafka's debug contexts, to stderr
            common["debug"] = os.environ["KAFKAWIRE_TXNCOPY_DEBUG"]
        self.consumer = self.m.Consumer(
            {
                **common,
                "client.id": f"{txn_id}-consumer",
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "session.timeout.ms": 10_000,
                "heartbeat.interval.ms": 1000,
                "partition.assignment.strategy": "range",
            }
        )
        self.producer = self.m.Producer(
            {**common, "client.id": txn_id, "transactional.id": txn_id, "linger.ms": 5, "acks": "all"}
        )
        self.open = 0  # records in the open transaction

    # --- transactions ----------------------------------------------------------------------------

    def retrying(self, what: str, call: Any) -> bool:
        """``call()`` until it succeeds (True) or the transaction must abort (False); fatal: exit."""
        while True:
            try:
                calling[0] = (what, time.monotonic())
                call()
                return True
            except self.m.KafkaException as exc:
                err = exc.args[0]
                note("txn_error", call=what, error=err.name(), text=err.str(), retriable=err.retriable())
                if err.fatal():
                    note("fatal", call=what, error=err.name())
                    sys.exit(3)
                if err.txn_requires_abort():
                    return False
                if not err.retriable():
                    raise
                time.sleep(0.1)
            finally:
                calling[0] = None

    def finish(self) -> None:
        """Commit the open transaction with the positions consumed; abort and rewind if it cannot."""
        if not self.open:
            return
        c, p = self.consumer, self.producer
        positions = c.position(c.assignment())
        offsets = {tp.partition: tp.offset for tp in positions if tp.offset >= 0}
        metadata = c.consumer_group_metadata()
        ok = self.retrying("send_offsets", lambda: p.send_offsets_to_transaction(positions, metadata, TIMEOUT))
        ok = ok and self.retrying("commit", lambda: p.commit_transaction(TIMEOUT))
        if ok:
            note("commit", records=self.open, offsets=offsets)
        else:
            self.abort(rewind=True)
        self.open = 0

    def abort(self, rewind: bool) -> None:
        if not self.open:
            return
        self.retrying("abort", lambda: self.producer.abort_transaction(TIMEOUT))
        note("abort", records=self.open)
        self.open = 0
        if rewind:  # the aborted records are read again from the group's committed offsets
            c = self.consumer
            for tp in c.committed(c.assignment(), timeout=TIMEOUT):
                tp.offset = tp.offset if tp.offset >= 0 else self.m.OFFSET_BEGINNING
                c.seek(tp)
            note("rewound")

    # --- the loop --------------------------------------------------------------------------------

    def run(self) -> None:
        c, p = self.consumer, self.producer
        self.retrying("init", lambda: p.init_transactions(TIMEOUT))
        note("ready")

        def assigned(_c: Any, parts: list[Any]) -> None:
            note("assign", partitions=sorted(tp.partition for tp in parts))

        def revoked(_c: Any, parts: list[Any]) -> None:
            self.finish()
            note("revoke", partitions=sorted(tp.partition for tp in parts))

        def lost(_c: Any, parts: list[Any]) -> None:
            self.abort(rewind=False)
            note("lost", partitions=sorted(tp.partition for tp in parts))

        c.subscribe([self.source], on_assign=assigned, on_revoke=revoked, on_lost=lost)
        while not stop.is_set():
            msg = c.poll(0.2)
            if msg is None:
                self.finish()
                continue
            if msg.error() is not None:
                note("consumer_error", error=msg.error().name(), fatal=msg.error().fatal())
                if msg.error().fatal():
                    sys.exit(3)
                continue
            if not self.open:
                p.begin_transaction()
            while True:
                try:
                    p.produce(self.dest, msg.value(), key=msg.key(), partition=msg.partition())
                    break
                except BufferError:
                    p.poll(0.05)
            self.open += 1
            if self.open >= BATCH:
                self.finish()
        self.finish()
        c.close()
        note("closed")


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGTERM, lambda _s, _f: stop.set())
    threading.Thread(target=watchdog, name="watchdog", daemon=True).start()
    Copier(*argv).run()


if __name__ == "__main__":
    main(sys.argv[1:])
