"""A Spark Connect server on 127.0.0.1, from the installed PySpark's own jars (its
``sbin/start-connect-server.sh`` without the daemon wrapper: ``bin/spark-submit --class
SparkConnectServer``), with ``local[2]`` as its master.

The server is a machine of its own as far as a client can tell: its own temporary directory (Java's
``java.io.tmpdir``, ``spark.local.dir``, ``TMPDIR`` of its Python workers), its own working
directory, and the Python its workers run (``python``: this venv's, with kafkawire installed, or a
bare one that has only what the client ships). It runs in a process group of its own that `stop`
kills, and dies with the process that started it (PR_SET_PDEATHSIG); `start` returns once the gRPC
port accepts connections.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from kafkawire.local_broker import _free_loopback_port, _with_parent_death_signal
from tests.harness.spark_cluster import pyspark_home

START_TIMEOUT = 180.0
DRIVER_MEMORY = "1g"
CONNECT_SERVER = "org.apache.spark.sql.connect.service.SparkConnectServer"


class SparkConnectUnavailable(RuntimeError):
    """The server did not come up (its log's tail is in the message)."""


def connect_jar() -> Path | None:
    """PySpark's Spark Connect server jar, or None when this PySpark ships none."""
    return next((pyspark_home() / "jars").glob("spark-connect_*.jar"), None)


def client_env(tmp: Path) -> dict[str, str]:
    """An environment for a client process as on a Connect-only platform: PATH holds only this
    venv's programs (no Java), no JAVA_HOME, SPARK_HOME or Spark variables, and a temporary
    directory of its own (``tmp``), which the server never sees."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    for key in ("JAVA_HOME", "MASTER", "PYTHONPATH"):
        env.pop(key, None)
    env["PATH"] = str(Path(sys.executable).parent)
    env["TMPDIR"] = str(tmp)
    assert shutil.which("java", path=env["PATH"]) is None, "a java in the venv's bin"
    return env


class SparkConnectServer:
    """``with SparkConnectServer(tmp) as server: ... server.url`` (``sc://127.0.0.1:PORT``)."""

    def __init__(self, directory: Path, python: str, *, pythonpath: str | None = None) -> None:
        """``python``: the interpreter of the server's Python workers (``PYSPARK_PYTHON``);
        ``pythonpath``: their PYTHONPATH (None: none, so only what ``python`` has installed)."""
        self.directory = directory
        self.python = python
        self.pythonpath = pythonpath
        self.port = _free_loopback_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        self.tmp = directory / "server-tmp"
        self._proc: subprocess.Popen[bytes] | None = None

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
        env.pop("PYTHONPATH", None)
        if self.pythonpath:
            env["PYTHONPATH"] = self.pythonpath
        env.update(
            SPARK_HOME=str(pyspark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_CONF_DIR=str(self.directory / "conf"),
            PYSPARK_PYTHON=self.python,
            PYSPARK_DRIVER_PYTHON=self.python,
            TMPDIR=str(self.tmp),
        )
        return env

    def start(self) -> SparkConnectServer:
        if connect_jar() is None:
            raise SparkConnectUnavailable(f"PySpark at {pyspark_home()} ships no spark-connect jar")
        self.tmp.mkdir(parents=True, exist_ok=True)
        (self.directory / "conf").mkdir(exist_ok=True)
        log4j = Path(__file__).resolve().parents[2] / "src" / "kafkawire" / "pipeline" / "log4j2.properties"
        command = [
            str(pyspark_home() / "bin" / "spark-submit"),
            "--class",
            CONNECT_SERVER,
            "--name",
            "kafkawire-tests-connect",
            "--master",
            "local[2,4]",  # two cores; a failed task is retried (the exactly-once tests fail some)
            "--driver-memory",
            DRIVER_MEMORY,
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            f"spark.connect.grpc.binding.port={self.port}",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=4",
            # Progress every 100 ms (the server's default is 2 s): a write that a fast host finishes
            # sooner would reach the client's progress bar with no report at all.
            "--conf",
            "spark.connect.progress.reportInterval=100ms",
            "--conf",
            f"spark.local.dir={self.tmp}",
            "--conf",
            f"spark.driver.extraJavaOptions=-Djava.io.tmpdir={self.tmp} -Dlog4j2.configurationFile={log4j.as_uri()}",
        ]
        log = (self.directory / "server.log").open("wb")
        self._proc = subprocess.Popen(
            _with_parent_death_signal(command),
            env=self._env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.directory,
        )
        log.close()
        try:
            self._wait()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        assert self._proc is not None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise SparkConnectUnavailable(f"the Connect server exited:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        raise SparkConnectUnavailable(f"the Connect server did not listen in {START_TIMEOUT:.0f} s\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGKILL the server's process group: the JVM and its Python workers."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(30)

    def log_tail(self, limit: int = 4000) -> str:
        path = self.directory / "server.log"
        return path.read_text(errors="replace")[-limit:] if path.exists() else ""

    def __enter__(self) -> SparkConnectServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
