"""kafkatest's verifiable consumer: subscribes ``--group-id`` to the ``--topic`` s and reports as
the harness expects: ``partitions_assigned``/``partitions_revoked`` at each rebalance,
``records_consumed`` every 100 records (and whenever a poll finds nothing) with each partition's
first and last offset since the last report, ``offsets_committed`` after each commit (every 1000
records, on revocation and at shutdown, unless ``--enable-autocommit``), then ``shutdown_complete``.
Offsets are stored only for records handed over, so a commit never covers one not consumed."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from .. import Consumer, KafkaError, KafkaException
from .verifiable_client import VerifiableClient

# A synchronous commit that fails with these is tried again (3 times, a second apart).
_RETRIED = (KafkaError.REQUEST_TIMED_OUT, KafkaError.NOT_COORDINATOR, KafkaError._WAIT_COORD)


class VerifiableConsumer(VerifiableClient):
    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self.conf["on_commit"] = self.on_commit
        self.consumer = Consumer(**conf)
        self.consumed_msgs = 0
        self.consumed_msgs_last_reported = 0
        self.consumed_msgs_at_last_commit = 0
        self.use_auto_commit = False
        self.use_async_commit = False
        self.max_msgs = -1
        self.verbose = False
        self.assignment: list[AssignedPartition] = []
        self.assignment_dict: dict[str, AssignedPartition] = {}

    def find_assignment(self, topic: str, partition: int) -> AssignedPartition | None:
        return self.assignment_dict.get(f"{topic} {partition}")

    def send_records_consumed(self, immediate: bool = False) -> None:
        """``records_consumed`` once 100 records came since the last (any number when ``immediate``)."""
        if self.consumed_msgs <= self.consumed_msgs_last_reported + (0 if immediate else 100):
            return
        if not self.assignment:
            return
        partitions = []
        for a in self.assignment:
            if a.min_offset == -1:
                continue
            partitions.append(a.to_dict())
            a.min_offset = -1
        count = self.consumed_msgs - self.consumed_msgs_last_reported
        self.send({"name": "records_consumed", "count": count, "partitions": partitions})
        self.consumed_msgs_last_reported = self.consumed_msgs

    def send_assignment(self, evtype: str, partitions: list[Any]) -> None:
        parts = [{"topic": p.topic, "partition": p.partition} for p in partitions]
        self.send({"name": "partitions_" + evtype, "partitions": parts})

    def on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        previous = {a.skey: a for a in self.assignment}
        self.assignment = [AssignedPartition(p.topic, p.partition) for p in partitions]
        for a in self.assignment:  # a partition kept keeps its first offset not yet reported
            if a.skey in previous:
                a.min_offset = previous[a.skey].min_offset
        self.assignment_dict = {a.skey: a for a in self.assignment}
        self.send_assignment("assigned", partitions)

    def on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self.send_records_consumed(immediate=True)
        self.do_commit(immediate=True, asynchronous=False)
        self.assignment = []
        self.assignment_dict = {}
        self.send_assignment("revoked", partitions)

    def on_commit(self, err: Any, partitions: list[Any]) -> None:
        if err is not None and err.code() == KafkaError._NO_OFFSET:
            self.dbg("on_commit(): no offsets to commit")
            return
        self.send_records_consumed(immediate=True)
        offsets = []
        for p in partitions:
            entry: dict[str, Any] = {"topic": p.topic, "partition": p.partition, "offset": p.offset}
            if p.error is not None:
                entry["error"] = str(p.error)
            offsets.append(entry)
        event = {"name": "offsets_committed", "offsets": offsets, "success": err is None}
        event["error"] = "" if err is None else str(err)
        if not self.assignment:
            self.dbg(f"Not sending offsets_committed: No current assignment: would be: {event}")
            return
        self.send(event)

    def do_commit(self, immediate: bool = False, asynchronous: bool | None = None) -> None:
        """Commit once 1000 records came since the last commit (any number when ``immediate``)."""
        if self.use_auto_commit or self.consumed_msgs_at_last_commit + (0 if immediate else 1000) > self.consumed_msgs:
            return
        if self.consumed_msgs_at_last_commit < self.consumed_msgs:
            self.send_records_consumed(immediate=True)
        async_mode = self.use_async_commit if asynchronous is None else asynchronous
        self.dbg(f"Committing {self.consumed_msgs - self.consumed_msgs_at_last_commit} messages (Async={async_mode})")
        retries = 3
        while True:
            try:
                offsets = self.consumer.commit(asynchronous=async_mode)
                self.dbg(f"Commit done: offsets {offsets}")
                if not async_mode:
                    self.on_commit(None, offsets or [])
                break
            except KafkaException as e:
                code = e.args[0].code()
                if code == KafkaError._NO_OFFSET:
                    self.dbg("No offsets to commit")
                    break
                if code not in _RETRIED or retries <= 0:
                    raise
                self.dbg(f"Commit failed: {e} ({retries} retries)")
                retries -= 1
                time.sleep(1)
        self.consumed_msgs_at_last_commit = self.consumed_msgs

    def msg_consume(self, msg: Any) -> None:
        """Count a consumed record (an error event is logged), store its offset, report and commit
        as due."""
        if msg.error():
            self.err(f"Consume failed: {msg.error()}", term=False)
            return
        if self.verbose:
            self.send(
                {
                    "name": "record_data",
                    "topic": msg.topic(),
                    "partition": msg.partition(),
                    "key": msg.key(),
                    "value": msg.value(),
                    "offset": msg.offset(),
                }
            )
        if 0 <= self.max_msgs <= self.consumed_msgs:
            return  # past --max-messages: ignored
        a = self.find_assignment(msg.topic(), msg.partition())
        if a is None:
            self.err(
                f"Received message on unassigned partition {msg.topic()} [{msg.partition()}] @ {msg.offset()}",
                term=True,
            )
            return
        a.consumed_msgs += 1
        if a.min_offset == -1:
            a.min_offset = msg.offset()
        a.max_offset = max(a.max_offset, msg.offset())
        self.consumed_msgs += 1
        self.consumer.store_offsets(message=msg)
        self.send_records_consumed(immediate=False)
        self.do_commit(immediate=False)


class AssignedPartition:
    """What the consumer counts for one assigned partition."""

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.skey = f"{topic} {partition}"
        self.consumed_msgs = 0
        self.min_offset = -1
        self.max_offset = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "minOffset": self.min_offset,
            "maxOffset": self.max_offset,
        }


def _arguments(argv: list[str] | None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="Verifiable Python Consumer")
    parser.add_argument("--topic", action="append", type=str, required=True)
    parser.add_argument("--group-id", dest="conf_group.id", required=True)
    parser.add_argument("--group-instance-id", dest="conf_group.instance.id")
    parser.add_argument("--broker-list", dest="conf_bootstrap.servers")
    parser.add_argument("--bootstrap-server", dest="conf_bootstrap.servers")
    parser.add_argument("--session-timeout", type=int, dest="conf_session.timeout.ms", default=6000)
    parser.add_argument("--enable-autocommit", action="store_true", dest="conf_enable.auto.commit", default=False)
    parser.add_argument("--max-messages", type=int, dest="max_messages", default=-1)
    parser.add_argument("--assignment-strategy", dest="conf_partition.assignment.strategy")
    parser.add_argument("--reset-policy", dest="topicconf_auto.offset.reset", default="earliest")
    parser.add_argument("--verbose", action="store_true", dest="verbose", default=False, help="Per-message stats")
    parser.add_argument("--consumer.config", dest="consumer_config")
    parser.add_argument("-X", nargs=1, dest="extra_conf", action="append", help="Configuration property", default=[])
    args = vars(parser.parse_args(argv))
    if args["conf_bootstrap.servers"] is None:
        parser.error("one of --broker-list or --bootstrap-server is required")
    if args.get("consumer_config") is not None:
        args.update(VerifiableClient.read_config_file(args["consumer_config"]))
    args.update(x[0].split("=", 1) for x in args.get("extra_conf", []))
    return args


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    conf: dict[str, Any] = {"enable.auto.offset.store": False}
    VerifiableClient.set_config(conf, args)
    vc = VerifiableConsumer(conf)
    vc.use_auto_commit = args["conf_enable.auto.commit"]
    vc.max_msgs = args["max_messages"]
    vc.verbose = args["verbose"]
    vc.dbg(f"Pid {os.getpid()}")
    vc.dbg(f"Subscribing to {args['topic']}")
    vc.consumer.subscribe(args["topic"], on_assign=vc.on_assign, on_revoke=vc.on_revoke)
    failed = False
    try:
        while vc.run:
            msg = vc.consumer.poll(timeout=1.0)
            if msg is None:
                vc.send_records_consumed(immediate=True)
                vc.do_commit(immediate=True)
                continue
            vc.msg_consume(msg)
    except KeyboardInterrupt:
        vc.dbg("KeyboardInterrupt")
        vc.run = False
    except Exception as e:
        vc.dbg(f"Terminating on exception: {e}")
        failed = True
    vc.dbg("Closing consumer")
    vc.send_records_consumed(immediate=True)
    if not failed:
        try:
            if not vc.use_auto_commit:
                vc.do_commit(immediate=True, asynchronous=False)
            vc.consumer.close()
        except Exception as e:
            vc.dbg(f"Ignoring exception while closing: {e}")
            failed = True
    vc.send({"name": "shutdown_complete", "failed": failed})
    vc.dbg("All done")


if __name__ == "__main__":
    main()
