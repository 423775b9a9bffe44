"""A transaction whose coordinator's broker is SIGKILLed mid-way, on the three-broker Kafka 2.3
cluster, on both clients at the same moment (issue 39: kafkawire's transaction-coordinator
requests once waited out their timeouts on a dead broker; librdkafka looks the coordinator up again).

Per client, one transactional producer whose transactional.id has the same coordinator as the
other client's sends records to partition 0 (flushed), more to partitions 1 and 2
(AddPartitionsToTxn), the group's offsets (AddOffsetsToTxn, TxnOffsetCommit), then calls
commit_transaction (EndTxn); every call is retried while retriable and the transaction aborted
when it must abort. The coordinator's broker is killed (and left down) either after the first
records ("mid-transaction": every request after it meets the dead coordinator) or just before the
commit ("before-commit": EndTxn alone does). Then a second producer with the same
transactional.id calls init_transactions (InitProducerId). The judge reads the topic
read_committed: the records are all there (and the offsets committed) when the transaction
committed, none when it aborted. Noted: how long after the kill the transaction ended, and how
long the second init_transactions took.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

import confluent_kafka
from confluent_kafka import TopicPartition as JudgeTopicPartition

from tests.harness.cluster_scenarios import CLIENTS, now, offsets_partition, read_log
from tests.harness.judge import LOGGER, judge_config, unique_name
from tests.harness.kafka_cluster import KafkaCluster

PARTITIONS = 3
BEFORE, AFTER = 50, 100  # records before the kill (partition 0), after it (partitions 1, 2)
TIMEOUT = 60.0
OVERRUN = 10.0  # s past its own timeout after which a call is taken as never returning


@dataclass
class FailoverRun:
    client: str
    topic: str
    txn_id: str
    outcome: str = ""  # "committed", "aborted" or the error that ended it
    ended_after: float | None = None  # s from the kill to the end of the transaction
    init_took: float | None = None  # the second producer's init_transactions, s
    calls: list[str] = field(default_factory=list)  # errors the calls raised, in order
    calling: tuple[str, float] | None = None  # the transactional call under way, since when
    overran: str | None = None  # the call still running OVERRUN s past its timeout, if one did

    def stuck(self) -> bool:
        """Its call has run OVERRUN s past its own timeout (librdkafka #5456/#5511, contributing/judges.md)."""
        call = self.calling
        if call is not None and now() - call[1] > TIMEOUT + OVERRUN:
            self.overran = call[0]
        return self.overran is not None


def sibling_ids(names: list[str]) -> dict[str, str]:
    """One transactional id per client, all in one __transaction_state partition (one coordinator)."""
    out: dict[str, str] = {}
    for name in names:
        while True:
            txn_id = unique_name(f"txn-failover-{name.split('-')[0]}")
            if not out or offsets_partition(txn_id) == offsets_partition(next(iter(out.values()))):
                out[name] = txn_id
                break
    return out


def transaction_coordinator(cluster: KafkaCluster, txn_id: str) -> int:
    """The broker leading the transactional id's __transaction_state partition."""
    return cluster.leaders("__transaction_state")[offsets_partition(txn_id)]


def _retried(run: FailoverRun, what: str, call: Any, module: Any) -> bool:
    """``call()`` until done (True) or the transaction must abort (False); fatal errors raise."""
    while True:
        try:
            run.calling = (what, now())
            call()
            return True
        except module.KafkaException as exc:
            err = exc.args[0]
            run.calls.append(f"{what}: {err.name()}")
            if err.txn_requires_abort():
                return False
            if not err.retriable():
                raise
        finally:
            run.calling = None


def _transaction(
    module: Any, bootstrap: str, run: FailoverRun, ready: threading.Barrier, killed: threading.Event, moment: str
) -> None:
    conf = {
        "bootstrap.servers": bootstrap,
        "transactional.id": run.txn_id,
        "broker.address.family": "v4",
        "enable.metrics.push": False,
        "linger.ms": 5,
    }
    if module is confluent_kafka:
        conf = judge_config(bootstrap, **conf)
    producer = module.Producer(conf)
    consumer = module.Consumer(_consumer_conf(conf))
    try:
        producer.init_transactions(TIMEOUT)
        producer.begin_transaction()
        for i in range(BEFORE):
            producer.produce(run.topic, b"%d" % i, partition=0)
        producer.flush(TIMEOUT)
        if moment == "mid-transaction":
            ready.wait()
            killed.wait()
        kill_time = now()
        for i in range(BEFORE, BEFORE + AFTER):
            producer.produce(run.topic, b"%d" % i, partition=1 + i % 2)
        offsets = [module.TopicPartition(run.topic, p, 10 + p) for p in range(PARTITIONS)]
        ok = _retried(
            run,
            "send_offsets",
            lambda: producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), TIMEOUT),
            module,
        )
        if moment == "before-commit":  # only EndTxn meets the dead coordinator
            producer.flush(TIMEOUT)
            ready.wait()
            killed.wait()
            kill_time = now()
        ok = ok and _retried(run, "commit", lambda: producer.commit_transaction(TIMEOUT), module)
        if not ok:
            _retried(run, "abort", lambda: producer.abort_transaction(TIMEOUT), module)
        run.outcome = "committed" if ok else "aborted"
        run.ended_after = now() - kill_time
    except Exception as exc:
        run.outcome = f"failed: {exc}"
    finally:
        consumer.close()
        try:
            producer.flush(10)
        except module.KafkaException as exc:  # librdkafka's flush raises a transaction's fatal error too
            run.calls.append(f"flush: {exc.args[0].name()}")
    second = module.Producer(conf)
    began = now()
    try:
        second.init_transactions(TIMEOUT)
        run.init_took = now() - began
    except Exception as exc:
        run.calls.append(f"second init: {exc}")
    finally:
        second.flush(1)


def _consumer_conf(conf: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in conf.items() if k not in ("transactional.id", "linger.ms")}
    out["group.id"] = conf["transactional.id"]
    return out


def run_txn_failover(
    cluster: KafkaCluster, moment: str = "mid-transaction", clients: tuple[str, ...] = tuple(CLIENTS)
) -> list[FailoverRun]:
    """Both clients' transactions, their coordinator killed at ``moment``: "mid-transaction"
    (between the first and second batch) or "before-commit" (once the
    records and offsets are in: EndTxn alone meets it); each
    run's outcome checked against the log (read_committed) before it is returned."""
    ids = sibling_ids(list(clients))
    runs = {name: FailoverRun(name, unique_name(f"txn-failover-{name.split('-')[0]}"), ids[name]) for name in clients}
    for run in runs.values():
        cluster.create_topic(run.topic, PARTITIONS)
    ready, killed = threading.Barrier(len(runs) + 1), threading.Event()
    threads = {
        name: threading.Thread(
            target=_transaction, args=(CLIENTS[name], cluster.bootstrap(), run, ready, killed, moment), daemon=True
        )
        for name, run in runs.items()
    }
    for t in threads.values():
        t.start()
    ready.wait(TIMEOUT * 2)
    victim = transaction_coordinator(cluster, next(iter(ids.values())))
    LOGGER.warning("killing broker %d, the transaction coordinator (%s)", victim, moment)
    cluster.kill(victim)
    killed.set()
    deadline = now() + TIMEOUT * 4
    while now() < deadline and any(t.is_alive() and not runs[name].stuck() for name, t in threads.items()):
        time.sleep(0.2)
    for name, run in list(runs.items()):
        if threads[name].is_alive():  # stuck in a call (left behind, a daemon thread) or too slow
            runs[name] = replace(run, outcome=f"overran {run.overran}" if run.overran else "unfinished")
            continue
        log = read_log(cluster.bootstrap(), run.topic, PARTITIONS)
        values = sorted(int(v) for records in log.values() for _o, v in records)
        expected = list(range(BEFORE + AFTER)) if run.outcome == "committed" else []
        if values != expected:
            run.calls.append(f"log holds {len(values)} records, expected {len(expected)}")
            run.outcome += " (log disagrees)"
        if run.outcome == "committed":
            judge = confluent_kafka.Consumer(judge_config(cluster.bootstrap(), **{"group.id": run.txn_id}))
            try:  # (the offsets are visible once the markers are written, after EndTxn's answer)
                wanted, deadline = [10 + p for p in range(PARTITIONS)], now() + 30
                while True:
                    got = judge.committed([JudgeTopicPartition(run.topic, p) for p in range(PARTITIONS)], timeout=30)
                    if [tp.offset for tp in got] == wanted or now() > deadline:
                        break
                    time.sleep(0.2)
                if [tp.offset for tp in got] != wanted:
                    run.outcome += f" (offsets {[tp.offset for tp in got]})"
            finally:
                judge.close()
    return list(runs.values())


def main() -> None:
    with KafkaCluster() as cluster:
        for moment in ("mid-transaction", "before-commit"):
            for run in run_txn_failover(cluster, moment):
                print(moment, run)
            for node in range(cluster.size):
                if not cluster.alive(node):
                    cluster.restart(node)


if __name__ == "__main__":
    main()
