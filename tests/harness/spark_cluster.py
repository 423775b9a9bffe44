"""A Spark standalone cluster on 127.0.0.1: one master and two workers, from the installed PySpark.

Each daemon is ``bin/spark-class`` (the JVM of ``pyspark``'s own jars) in a process group of its
own, so `stop` (and `kill_worker`, a lost machine) ends the JVM and anything it started. The
master's web UI answers ``/json`` with the workers it has registered; `start` returns once every
worker is ALIVE there. Workers offer 1 core and ``WORKER_MEMORY`` each; their work and log dirs are
under the cluster's own directory.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from kafkawire.local_broker import _free_loopback_port

WORKER_MEMORY = "1g"
DAEMON_MEMORY = "256m"  # the master's and workers' own JVM heaps (SPARK_DAEMON_MEMORY)
START_TIMEOUT = 180.0


class SparkClusterUnavailable(RuntimeError):
    """The cluster did not come up (its logs' tails are in the message)."""


def pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


class SparkCluster:
    """``with SparkCluster(tmp) as cluster: ... cluster.master_url``."""

    def __init__(self, directory: Path, workers: int = 2, *, inherit_pythonpath: bool = True) -> None:
        """``inherit_pythonpath=False``: the daemons (so the executors) do not see this process's
        PYTHONPATH: executors with no kafkawire but what the application ships."""
        self.directory = directory
        self.inherit_pythonpath = inherit_pythonpath
        self.worker_count = workers
        self.port = _free_loopback_port()
        self.web_port = _free_loopback_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self._procs: dict[str, subprocess.Popen[bytes]] = {}

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
        if not self.inherit_pythonpath:
            env.pop("PYTHONPATH", None)
        home = pyspark_home()
        env.update(
            SPARK_HOME=str(home),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY=DAEMON_MEMORY,
            SPARK_LOG_DIR=str(self.directory / "logs"),
            SPARK_NO_DAEMONIZE="1",
        )
        return env

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.directory / f"{name}.log").open("wb")
        command = [str(pyspark_home() / "bin" / "spark-class"), *argv]
        self._procs[name] = subprocess.Popen(
            command, env=self._env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=self.directory
        )
        log.close()

    def start(self) -> SparkCluster:
        self.directory.mkdir(parents=True, exist_ok=True)
        self._spawn(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.web_port),
            ],
        )
        for i in range(self.worker_count):
            self.start_worker(i, wait=False)
        try:
            self.wait_workers(self.worker_count)
        except BaseException:
            self.stop()
            raise
        return self

    def start_worker(self, index: int, wait: bool = True) -> None:
        """Worker ``index`` (again, after `kill_worker`)."""
        work = self.directory / f"worker-{index}"
        work.mkdir(exist_ok=True)
        self._spawn(
            f"worker-{index}",
            [
                "org.apache.spark.deploy.worker.Worker",
                self.master_url,
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                WORKER_MEMORY,
                "--webui-port",
                str(_free_loopback_port()),
                "--work-dir",
                str(work),
            ],
        )
        if wait:
            self.wait_workers(self.worker_count)

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}/json", timeout=5) as answer:
            return dict(json.load(answer))

    def alive_workers(self) -> int:
        return sum(1 for w in self.state().get("workers", []) if w.get("state") == "ALIVE")

    def wait_workers(self, count: int, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [name for name, p in self._procs.items() if p.poll() is not None and name == "master"]
            if dead:
                raise SparkClusterUnavailable(f"the master exited:\n{self.log_tail('master')}")
            try:
                if self.alive_workers() >= count:
                    return
            except (OSError, ValueError):
                pass  # the web UI is not up yet (no answer, or not JSON yet)
            time.sleep(0.5)
        tails = "\n".join(f"--- {name}\n{self.log_tail(name)}" for name in self._procs)
        raise SparkClusterUnavailable(f"{count} workers did not register in {timeout:.0f} s\n{tails}")

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker ``index``'s process group: the worker and its executors, as a lost machine."""
        self._kill(f"worker-{index}")

    def _kill(self, name: str) -> None:
        proc = self._procs.pop(name, None)
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(30)

    def stop(self) -> None:
        """Workers first (with their executors), then the master; nothing is left running."""
        for name in sorted(self._procs, key=lambda n: n == "master"):
            self._kill(name)

    def log_tail(self, name: str, limit: int = 3000) -> str:
        path = self.directory / f"{name}.log"
        return path.read_text(errors="replace")[-limit:] if path.exists() else ""

    def __enter__(self) -> SparkCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
