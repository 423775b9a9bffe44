"""Three real Apache Kafka 2.3 brokers and one ZooKeeper on 127.0.0.1, each broker a process of its own.

The multi-broker counterpart of `tests.harness.kafka_broker` (same distribution, class path and
JVM options): PLAINTEXT listeners only, replication 3 and ``min.insync.replicas`` 2 for every topic
and for the offsets and transaction logs, unclean leader election off. A test can SIGKILL a
broker (`kill`), freeze and thaw it (`pause`, `resume`), start it again on its own log directory
and ports (`restart`), and move a partition's leadership to another replica (`move_leader`).
Every process dies with the test process (PR_SET_PDEATHSIG) and `stop` ends them all.

With ``network=True`` every connection goes through a `tests.harness.fault_proxy.FaultProxy` on
127.0.0.1 (`ClusterNetwork`): the clients' through one per broker (the brokers advertise the
proxies), the brokers' own through one per (from, to) pair of brokers (broker ``n`` talks to the
others on its own listener name ``REPLn``, which each broker advertises at the proxy of that
pair), and each broker's ZooKeeper session through one of its own. So a broker can be cut from
its peers and ZooKeeper while its clients still reach it (`ClusterNetwork.isolate`), or from its
clients only. A direct ``JUDGE`` listener, never faulted, serves the judges
(`judge_bootstrap`), and `restart` can bring a broker back at another address.

The brokers' failure detection is shortened (ZooKeeper session 6 s, replica lag 5 s) so a
killed broker's partitions get a new leader within seconds, as on a production cluster tuned for
fast failover; nothing in the clients' behaviour depends on these numbers.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kafkawire.local_broker import _free_loopback_port, _with_parent_death_signal
from tests.harness.fault_proxy import FaultProxy
from tests.harness.kafka_broker import KafkaUnavailable, _class_path, _java, kafka_home

BROKERS = 3


class ClusterNetwork:
    """The fault proxies of a cluster started with ``network=True``: ``clients[n]`` (clients to
    broker n), ``links[(m, n)]`` (broker m to broker n: replica fetches, controller requests),
    ``zookeeper[n]`` (broker n's ZooKeeper session)."""

    def __init__(self, nodes: range, seed: int) -> None:
        self.clients = {n: FaultProxy(f"client-{n}", seed + n) for n in nodes}
        self.links = {(m, n): FaultProxy(f"link-{m}-{n}", seed + 10 * m + n) for m in nodes for n in nodes}
        self.zookeeper = {n: FaultProxy(f"zookeeper-{n}", seed + 100 + n) for n in nodes}

    def all(self) -> list[FaultProxy]:
        return [*self.clients.values(), *self.links.values(), *self.zookeeper.values()]

    def peers(self, node: int) -> list[FaultProxy]:
        """The links between ``node`` and the other brokers, both ways."""
        return [proxy for (m, n), proxy in self.links.items() if (m == node) != (n == node)]

    def isolate(self, node: int) -> None:
        """Blackhole ``node``'s links to the other brokers and its ZooKeeper session; its clients
        still reach it."""
        for proxy in [*self.peers(node), self.zookeeper[node]]:
            proxy.blackhole()

    def rejoin(self, node: int) -> None:
        for proxy in [*self.peers(node), self.zookeeper[node]]:
            proxy.heal()

    def close(self) -> None:
        for proxy in self.all():
            proxy.close()


class KafkaCluster:
    """ZooKeeper and ``size`` Kafka 2.3 brokers (ids 0..size-1) in a fresh directory."""

    def __init__(
        self, size: int = BROKERS, start_timeout: float = 240.0, network: bool = False, seed: int = 53
    ) -> None:
        self.size = size
        self.start_timeout = start_timeout
        self.ports: dict[int, int] = {}  # the port clients are given for each broker
        self.judge_ports: dict[int, int] = {}  # the port the judges use (the same without a network)
        self.net = ClusterNetwork(range(size), seed) if network else None
        self._listen: dict[int, dict[str, int]] = {}  # network: node -> listener name -> its own port
        self._dir: Path | None = None
        self._zookeeper: subprocess.Popen[bytes] | None = None
        self._brokers: dict[int, subprocess.Popen[bytes]] = {}
        self._log_mark: dict[int, int] = {}  # where each broker's log was when it last started
        self._zk_address = ""
        self._common: list[str] = []
        # PR_SET_PDEATHSIG fires when the *thread* that started a process ends: every process is
        # started by this one thread, which lives as long as the test process.
        self._spawns: queue.Queue[tuple[Callable[[], subprocess.Popen[bytes]], queue.Queue[object]]] = queue.Queue()
        threading.Thread(target=self._spawner, name="cluster-spawner", daemon=True).start()

    # --- life ----------------------------------------------------------------------------------

    def start(self) -> KafkaCluster:
        home = kafka_home()
        self._dir = Path(tempfile.mkdtemp(prefix="kafkawire-cluster23-"))
        zk_port = _free_loopback_port()
        self._zk_address = f"127.0.0.1:{zk_port}"
        self.ports = {node: _free_loopback_port() for node in range(self.size)}
        self.judge_ports = dict(self.ports)
        if self.net is not None:
            self._wire(zk_port)
        self._common = [
            _java(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-cp",
            _class_path(home),
            f"-Dlog4j.configuration=file:{home / 'config' / 'log4j.properties'}",
            "-Dzookeeper.sasl.client=false",
        ]
        (self._dir / "zookeeper.properties").write_text(
            f"dataDir={self._dir / 'zookeeper'}\nclientPort={zk_port}\nclientPortAddress=127.0.0.1\n"
            "maxClientCnxns=0\nadmin.enableServer=false\n"
        )
        self._zookeeper = self._spawn(
            "zookeeper", ["org.apache.zookeeper.server.quorum.QuorumPeerMain", "zookeeper.properties"]
        )
        for node in range(self.size):
            self._write_properties(node)
            self._start_broker(node)
        deadline = time.monotonic() + self.start_timeout
        for node in range(self.size):
            self._wait_started(node, deadline)
        self._wait_registered(set(range(self.size)), deadline)
        return self

    def _wire(self, zk_port: int) -> None:
        """Ports of every listener and the proxies in front of them."""
        assert self.net is not None
        nodes = range(self.size)
        for n in nodes:
            names = ["CLIENT", *(f"REPL{m}" for m in nodes)]
            self._listen[n] = {name: _free_loopback_port() for name in names}
            self.net.clients[n].start(self._listen[n]["CLIENT"])
            self.net.zookeeper[n].start(zk_port)
            for m in nodes:
                self.net.links[(m, n)].start(self._listen[n][f"REPL{m}"])
        self.ports = {n: self.net.clients[n].port for n in nodes}

    def stop(self) -> None:
        for proc in [*self._brokers.values(), *([self._zookeeper] if self._zookeeper else [])]:
            if proc.poll() is None:
                try:
                    os.kill(proc.pid, signal.SIGCONT)  # a paused broker cannot end
                except ProcessLookupError:
                    pass
                proc.kill()
            proc.wait()
        self._brokers.clear()
        self._zookeeper = None
        if self.net is not None:
            self.net.close()
        if self._dir is not None:
            if os.environ.get("KAFKAWIRE_KEEP_CLUSTER_LOGS"):  # the brokers' own logs, to read after a run
                print(f"cluster's directory kept: {self._dir}", file=sys.stderr)
            else:
                shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def bootstrap(self) -> str:
        """The clients' bootstrap servers (the proxies, with a network)."""
        return ",".join(f"127.0.0.1:{port}" for port in self.ports.values())

    def judge_bootstrap(self) -> str:
        """The judges' bootstrap servers: straight to the brokers, whatever the network does."""
        return ",".join(f"127.0.0.1:{port}" for port in self.judge_ports.values())

    # --- faults --------------------------------------------------------------------------------

    def kill(self, node: int) -> None:
        """SIGKILL the broker: no controlled shutdown, its sockets reset, its log left as it was."""
        proc = self._brokers[node]
        os.kill(proc.pid, signal.SIGCONT)
        proc.kill()
        proc.wait()

    def pause(self, node: int) -> None:
        """SIGSTOP: the broker holds its connections open and answers nothing."""
        os.kill(self._brokers[node].pid, signal.SIGSTOP)

    def resume(self, node: int) -> None:
        os.kill(self._brokers[node].pid, signal.SIGCONT)

    def restart(self, node: int, wait: bool = True, new_address: bool = False) -> None:
        """Start a killed broker again, on its log directory and port (it recovers its log); with
        ``new_address`` (network only) clients are given a new port for it and the old one refuses."""
        if self._brokers[node].poll() is None:
            self.kill(node)
        if new_address:
            assert self.net is not None, "a new address needs the cluster's network"
            self.net.clients[node].refuse()
            self.net.clients[node].reset()
            moved = FaultProxy(f"client-{node}-moved").start(self._listen[node]["CLIENT"])
            self.net.clients[node] = moved
            self.ports[node] = moved.port
            self._write_properties(node)
        self._start_broker(node)
        if wait:
            self.wait_started(node)

    def wait_started(self, node: int, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.start_timeout)
        while True:
            try:
                self._wait_started(node, deadline)
                break
            except KafkaUnavailable:
                # A broker started again before ZooKeeper expired its killed self's session finds
                # its registration still there and exits; it is started again once that is gone.
                if b"NodeExists" not in self._log_since_start(node) or time.monotonic() > deadline:
                    raise
                time.sleep(1.0)
                self._start_broker(node)
        self._wait_registered({node}, deadline)

    def alive(self, node: int) -> bool:
        return self._brokers[node].poll() is None

    # --- what the cluster looks like (asked of confluent-kafka, the judge) ---------------------

    def create_topic(
        self, topic: str, partitions: int, replication: int = BROKERS, timeout: float = 60.0, like: str | None = None
    ) -> None:
        """``like``: a topic whose leaders and replicas the new one copies, partition by partition
        (its leader first: the one a new partition elects), so that a fault on a broker hits both
        topics' same partitions."""
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.judge_bootstrap(), "log_level": 0})
        if like is None:
            new = NewTopic(topic, partitions, replication)
        else:
            model = admin.list_topics(like, timeout=10).topics[like].partitions
            lead = [model[p] for p in range(partitions)]
            replicas = [[m.leader, *(r for r in m.replicas if r != m.leader)] for m in lead]
            new = NewTopic(topic, partitions, replica_assignment=replicas)
        future = admin.create_topics([new], operation_timeout=30)[topic]
        future.result(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:  # every live broker knows a leader of every partition, the same
            seen = [v for n in self.judge_ports if (v := self._answered_leaders(topic, n)) is not None]
            if seen and all(len(v) == partitions and min(v.values()) >= 0 and v == seen[0] for v in seen):
                return
            time.sleep(0.2)
        raise AssertionError(f"{topic}: partitions without leaders: {self.leaders(topic)}")

    def recreate_topic(self, topic: str, partitions: int, timeout: float = 60.0) -> None:
        """Delete ``topic`` and create it again (as soon as the brokers let a topic of that name be
        created: deletion is asynchronous), with ``partitions`` partitions."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.judge_bootstrap(), "log_level": 0})
        admin.delete_topics([topic], operation_timeout=30)[topic].result(timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.create_topic(topic, partitions, timeout=timeout)
                return
            except KafkaException:  # still marked for deletion
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def add_partitions(self, topic: str, total: int, timeout: float = 60.0) -> None:
        """Grow ``topic`` to ``total`` partitions and wait until each has a leader (asked again
        while the brokers answer NOT_CONTROLLER: a loaded controller's ZooKeeper session moves)."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient, NewPartitions

        admin = AdminClient({"bootstrap.servers": self.judge_bootstrap(), "log_level": 0})
        deadline = time.monotonic() + timeout
        asked = False
        while time.monotonic() < deadline:
            leaders = self.leaders(topic)
            if len(leaders) == total and all(node >= 0 for node in leaders.values()):
                return
            if not asked and len(leaders) < total:
                try:
                    admin.create_partitions([NewPartitions(topic, total)], operation_timeout=30)[topic].result(timeout)
                    asked = True
                except KafkaException as exc:
                    if not exc.args[0].retriable() and exc.args[0].name() != "NOT_CONTROLLER":
                        raise
            time.sleep(0.2)
        raise AssertionError(f"{topic}: grown partitions without leaders: {self.leaders(topic)}")

    def leaders(self, topic: str, node: int | None = None) -> dict[int, int]:
        """Partition -> leader's node id (-1 while it has none), from a live broker's metadata (or
        ``node``'s: each broker learns a new topic from the controller on its own time)."""
        from confluent_kafka.admin import AdminClient

        where = self._live_bootstrap() if node is None else f"127.0.0.1:{self.judge_ports[node]}"
        admin = AdminClient({"bootstrap.servers": where, "log_level": 0})
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        return {} if meta is None or meta.error is not None else {p.id: p.leader for p in meta.partitions.values()}

    def _answered_leaders(self, topic: str, node: int) -> dict[int, int] | None:
        """``node``'s leaders of ``topic``; None when it is down or does not answer (frozen)."""
        from confluent_kafka import KafkaException

        if not self.alive(node):
            return None
        try:
            return self.leaders(topic, node)
        except KafkaException:
            return None

    def coordinator(self, group: str) -> int:
        """The node id of ``group``'s coordinator (FindCoordinator, asked with a raw request by
        confluent-kafka's admin: its describe_consumer_groups names the coordinator)."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self._live_bootstrap(), "log_level": 0})
        description = admin.describe_consumer_groups([group], request_timeout=10)[group].result(15)
        return int(description.coordinator.id)

    def move_leader(self, topic: str, partition: int, to: int, timeout: float = 60.0) -> None:
        """A controlled leader move: reorder the partition's replicas so ``to`` comes first
        (ZooKeeper-based reassignment, as Kafka 2.3's tools do it), then elect the preferred leader."""
        assert self._dir is not None
        replicas = [to, *(n for n in range(self.size) if n != to)]
        plan = self._dir / f"move-{topic}-{partition}.json"
        plan.write_text(
            json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": partition, "replicas": replicas}]})
        )
        self._tool(
            "kafka.admin.ReassignPartitionsCommand",
            "--zookeeper",
            self._zk_address,
            "--reassignment-json-file",
            str(plan),
            "--execute",
        )
        deadline = time.monotonic() + timeout
        while b"successfully" not in self._tool(
            "kafka.admin.ReassignPartitionsCommand",
            "--zookeeper",
            self._zk_address,
            "--reassignment-json-file",
            str(plan),
            "--verify",
        ):
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}-{partition}: reassignment to {replicas} did not finish")
            time.sleep(0.5)
        election = self._dir / f"elect-{topic}-{partition}.json"
        election.write_text(json.dumps({"partitions": [{"topic": topic, "partition": partition}]}))
        self._tool(
            "kafka.admin.PreferredReplicaLeaderElectionCommand",
            "--zookeeper",
            self._zk_address,
            "--path-to-json-file",
            str(election),
        )
        while self.leaders(topic).get(partition) != to:
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}-{partition}: leadership did not move to {to}")
            time.sleep(0.2)

    def log_tail(self, node: int, limit: int = 4000) -> str:
        assert self._dir is not None
        return (self._dir / f"kafka-{node}.out").read_bytes()[-limit:].decode(errors="replace")

    # --- inside --------------------------------------------------------------------------------

    def _live_bootstrap(self) -> str:
        live = [f"127.0.0.1:{port}" for node, port in self.judge_ports.items() if self.alive(node)]
        return ",".join(live) or self.judge_bootstrap()

    def _write_properties(self, node: int) -> None:
        assert self._dir is not None
        listener = f"PLAINTEXT://127.0.0.1:{self.ports[node]}"
        listeners = [f"listeners={listener}", f"advertised.listeners={listener}"]
        zookeeper = self._zk_address
        if self.net is not None:
            judge = f"JUDGE://127.0.0.1:{self.judge_ports[node]}"
            own = self._listen[node]
            repl = [f"REPL{m}" for m in range(self.size)]
            listeners = [
                "listeners=" + ",".join([judge, *(f"{name}://127.0.0.1:{port}" for name, port in own.items())]),
                "advertised.listeners="
                + ",".join(
                    [
                        judge,
                        f"CLIENT://{self.net.clients[node].address}",
                        *(f"{name}://{self.net.links[(m, node)].address}" for m, name in enumerate(repl)),
                    ]
                ),
                "listener.security.protocol.map=" + ",".join(f"{n}:PLAINTEXT" for n in ["JUDGE", "CLIENT", *repl]),
                f"inter.broker.listener.name=REPL{node}",
            ]
            zookeeper = self.net.zookeeper[node].address
        (self._dir / f"server-{node}.properties").write_text(
            "\n".join(
                [
                    f"broker.id={node}",
                    *listeners,
                    f"log.dirs={self._dir / f'data-{node}'}",
                    f"zookeeper.connect={zookeeper}",
                    "zookeeper.session.timeout.ms=6000",
                    # With a network: 30 s (Kafka 2.5+'s default), longer than a test's cuts. An
                    # isolated leader's ISR shrink waits on ZooKeeper holding that partition's
                    # lock, so with 5 s one of its partitions (whichever it tries first) stops
                    # taking records and the others do not: two clients' topics would not meet
                    # the same fault.
                    f"replica.lag.time.max.ms={30000 if self.net is not None else 5000}",
                    "num.partitions=3",
                    "default.replication.factor=3",
                    "min.insync.replicas=2",
                    "unclean.leader.election.enable=false",
                    "offsets.topic.replication.factor=3",
                    "offsets.topic.num.partitions=6",
                    "transaction.state.log.replication.factor=3",
                    "transaction.state.log.min.isr=2",
                    "transaction.state.log.num.partitions=6",
                    "transaction.abort.timed.out.transaction.cleanup.interval.ms=2000",
                    "group.initial.rebalance.delay.ms=0",
                    # leadership stays where failover put it unless a test moves it
                    "auto.leader.rebalance.enable=false",
                    "log.retention.ms=-1",
                    "auto.create.topics.enable=false",
                    "",
                ]
            )
        )

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        directory = self._dir
        assert directory is not None

        def start() -> subprocess.Popen[bytes]:
            with open(directory / f"{name}.out", "ab") as out:
                return subprocess.Popen(
                    _with_parent_death_signal([*self._common, f"-Dkafka.logs.dir={directory / f'logs-{name}'}", *argv]),
                    cwd=directory,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )

        answer: queue.Queue[object] = queue.Queue()
        self._spawns.put((start, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, subprocess.Popen)
        return result

    def _spawner(self) -> None:
        while True:
            start, answer = self._spawns.get()
            try:
                answer.put(start())
            except BaseException as exc:
                answer.put(exc)

    def _start_broker(self, node: int) -> None:
        assert self._dir is not None
        out = self._dir / f"kafka-{node}.out"
        self._log_mark[node] = out.stat().st_size if out.exists() else 0
        self._brokers[node] = self._spawn(f"kafka-{node}", ["kafka.Kafka", f"server-{node}.properties"])

    def _log_since_start(self, node: int) -> bytes:
        assert self._dir is not None
        with open(self._dir / f"kafka-{node}.out", "rb") as f:
            f.seek(self._log_mark[node])
            return f.read()

    def _wait_started(self, node: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            if b"started (kafka.server.KafkaServer)" in self._log_since_start(node):
                return
            if self._brokers[node].poll() is not None:
                break
            time.sleep(0.1)
        tail = self.log_tail(node)
        raise KafkaUnavailable(f"Kafka 2.3 broker {node} did not start; its log ends with:\n{tail}")

    def _wait_registered(self, nodes: set[int], deadline: float) -> None:
        """Until a Metadata answer lists ``nodes`` (the controller has seen them register)."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        while time.monotonic() < deadline:
            admin = AdminClient({"bootstrap.servers": self._live_bootstrap(), "log_level": 0})
            try:
                if nodes <= set(admin.list_topics(timeout=5).brokers):
                    return
            except KafkaException:
                pass
            time.sleep(0.2)
        raise KafkaUnavailable(f"Kafka 2.3 brokers {sorted(nodes)} did not register")

    def _tool(self, *argv: str) -> bytes:
        home = kafka_home()
        done = subprocess.run(
            [
                _java(),
                "-Xmx128m",
                "-cp",
                _class_path(home),
                "-Dzookeeper.sasl.client=false",
                f"-Dlog4j.configuration=file:{home / 'config' / 'tools-log4j.properties'}",
                *argv,
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return done.stdout
