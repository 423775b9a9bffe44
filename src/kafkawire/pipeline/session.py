"""The Spark session a pipeline runs on: a classic one (a JVM in this process: local mode, a
standalone master, spark-submit's) or a Spark Connect one (``--remote sc://host:15002`` or
``SPARK_REMOTE``: the JVM is the server's, this process needs no Java).

Over Connect there is no ``sparkContext``, RDD or JVM: what the pipeline asks of Spark goes
through the DataFrame and session API both kinds share, and the few things that differ (the
write's progress and task counts, job tags) are chosen here by `is_connect`. The server also
has its own disk: a path this process makes (a temporary folder, a summary file) means nothing
to it, so `server_path` refuses one given as a relative path.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class PipelineError(Exception):
    """The run could not start: a bad input, option or column. The message says what to change."""


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")  # file:, hdfs://, s3a://, dbfs:/ ...
JAVA_HELP = "Debian/Ubuntu: apt-get install openjdk-17-jre-headless; elsewhere install a JDK 17+ and set JAVA_HOME"
CONNECT_HELP = "pip install 'kafkawire[connect]' (PySpark's Spark Connect client: grpcio, pandas, zstandard)"


def check_java() -> None:
    """Spark's JVM needs Java 17+: say so plainly instead of PySpark's JAVA_GATEWAY_EXITED."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={java_home} has no bin/java" if java_home else "no 'java' on PATH"
        raise PipelineError(f"Spark needs Java 17 or newer ({where}). {JAVA_HELP}")


def remote_url(remote: str | None) -> str | None:
    """The Spark Connect server to use: ``remote``, else ``SPARK_REMOTE`` (as PySpark reads it)."""
    url = remote if remote is not None else os.environ.get("SPARK_REMOTE") or None
    if url is not None and not url.startswith("sc://"):
        raise PipelineError(f"--remote {url!r}: a Spark Connect URL starts with sc://, e.g. sc://host:15002")
    return url


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no sparkContext, no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def where(spark: SparkSession) -> str:
    """Where the session runs its jobs: its master, or the Connect server it talks to."""
    if is_connect(spark):
        return f"Spark Connect at {spark.client.host}"
    return spark.sparkContext.master or ""


def server_path(spark: SparkSession, path: str, option: str) -> str:
    """``path`` as given, for the server to use; a relative path on a Connect session is refused:
    it would name a folder of the server's own working directory, not of this machine."""
    if is_connect(spark) and not path.startswith("/") and _SCHEME.match(path) is None:
        raise PipelineError(
            f"{option} {path!r}: over Spark Connect the server reads and writes this path on its own "
            "machine; give an absolute path or URL it can reach (file:/..., hdfs://, s3a://, dbfs:/...)"
        )
    return path


def build_session(master: str | None, remote: str | None = None, app_name: str = "kafkawire-pipeline") -> SparkSession:
    """A SparkSession for the command line: a Spark Connect session when ``remote`` is a URL, else
    a classic one. In a classic session Python workers run this interpreter (unless PYSPARK_PYTHON
    says otherwise), so they import the same kafkawire; in local mode the driver binds to 127.0.0.1
    only and starts no web UI; on a standalone master it binds where the workers can reach it."""
    if remote is not None:
        return _connect_session(remote)
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name).config("spark.ui.showConsoleProgress", "false")
    if master is not None:
        builder = builder.master(master)
    launching_jvm = SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ
    if launching_jvm:
        check_java()
    effective = master or (os.environ.get("MASTER") if launching_jvm else None) or "local[*]"
    if not launching_jvm:  # spark-submit started the JVM: its --master counts
        effective = master or SparkConf().get("spark.master", "local[*]")
    if launching_jvm and "log4j2.configurationFile" not in os.environ.get("SPARK_SUBMIT_OPTS", ""):
        log_conf = Path(__file__).with_name("log4j2.properties")
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf.as_uri()}")
    if effective.startswith("local"):
        if launching_jvm:
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = (
            builder.config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.ui.enabled", "false")
            # One machine: a few shuffle (and streaming state) partitions, not Spark's 200.
            .config("spark.sql.shuffle.partitions", str(2 * (os.cpu_count() or 1)))
        )
    elif launching_jvm:
        builder = _reachable_driver(builder, effective)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _connect_session(url: str) -> SparkSession:
    """A session on the Spark Connect server at ``url``, through PySpark's own builder, which also
    switches ``pyspark.sql.functions`` to their Connect forms in this process. The server's
    configuration stands (it refuses to change its static settings, the application name too), so
    none is set."""
    try:
        import pyspark.sql.connect.session  # noqa: F401  # checks the Connect client's dependencies
    except ImportError as exc:
        raise PipelineError(f"--remote needs PySpark's Spark Connect client: {CONNECT_HELP} ({exc})") from None
    from pyspark.sql import SparkSession

    try:
        return SparkSession.builder.remote(url).create()
    except Exception as exc:
        raise PipelineError(f"--remote {url}: cannot open a Spark Connect session: {exc}") from None


def _reachable_driver(builder: SparkSession.Builder, master: str) -> SparkSession.Builder:
    """A standalone master's executors connect back to the driver: bind and advertise the address
    they can reach (`pipeline.cluster`), or say what to set."""
    from .driver_address import driver_address

    try:
        address = driver_address(master)
    except OSError as exc:
        raise PipelineError(
            f"--master {master}: no route from this machine to the master ({exc}), so the driver cannot tell "
            "the workers where to reach it; set SPARK_LOCAL_IP to an address of this machine they can reach"
        ) from None
    if address is None:
        return builder
    os.environ.setdefault("SPARK_LOCAL_IP", address)
    return builder.config("spark.driver.bindAddress", address).config("spark.driver.host", address)


def open_session(
    spark: SparkSession | None, master: str | None, stack: ExitStack, remote: str | None = None
) -> SparkSession:
    """``spark``, else the active session (a notebook's or a test's: its owner stops it), else a new
    one that ``stack`` stops (on the Connect server ``remote`` or ``SPARK_REMOTE`` names, else
    classic); with the kafkawire data source registered."""
    if master is not None and master.startswith("sc://"):
        raise PipelineError(f"--master {master}: a Spark Connect URL goes to --remote (or SPARK_REMOTE)")
    url = remote_url(remote) if spark is None else None
    if url is not None and master is not None:
        raise PipelineError("give --master or --remote, not both: a Spark Connect server has its own master")
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession() if url is None else None
        if spark is None:
            spark = build_session(master, url)
            stack.callback(spark.stop)
        elif master is not None and master != where(spark):
            raise PipelineError(f"--master {master}: this process already runs Spark on {where(spark)}")
    from kafkawire.spark import register

    register(spark)
    return spark
