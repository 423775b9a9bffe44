"""One real PySpark session in local mode for every Spark test (starting one costs seconds), and one
Spark Connect server for the Connect tests."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from tests.harness.spark_connect import SparkConnectServer


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """``local[2,4]``: two cores, and a failed task is retried up to 4 times (the exactly-once tests
    make attempts fail on purpose). Python workers run this interpreter, so they see kafkawire."""
    from pyspark.sql import SparkSession

    from kafkawire.spark import register

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2,4]")
        .appName("kafkawire-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkConnectServer]:
    """One Spark Connect server (PySpark's own jars, ``local[2,4]``, 127.0.0.1) for the session,
    its Python workers on this interpreter (kafkawire installed on the server). Started on first
    use: the Connect tests' clients run in their own processes, as on a Connect-only platform."""
    from tests.harness.spark_connect import SparkConnectServer, SparkConnectUnavailable, connect_jar

    try:
        import pyspark.sql.connect.session  # noqa: F401  # the client's dependencies (kafkawire[connect])
    except ImportError as exc:
        pytest.skip(f"no Spark Connect client: {exc}")
    if connect_jar() is None:
        pytest.skip("this PySpark ships no Spark Connect server jar")
    server = SparkConnectServer(tmp_path_factory.mktemp("connect-server"), sys.executable)
    try:
        server.start()
    except SparkConnectUnavailable as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        server.stop()
