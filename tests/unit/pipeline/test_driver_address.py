"""The pipeline's driver address for a standalone master (kafkawire.pipeline.driver_address): loopback
masters give 127.0.0.1, SPARK_LOCAL_IP wins, other masters are left to Spark, no route is an error."""

from __future__ import annotations

import pytest

from kafkawire.pipeline.driver_address import driver_address, master_hosts


def test_master_hosts() -> None:
    assert master_hosts("spark://127.0.0.1:7077") == [("127.0.0.1", 7077)]
    assert master_hosts("spark://a:7001,b:7002") == [("a", 7001), ("b", 7002)]
    assert master_hosts("spark://[::1]:7077") == [("::1", 7077)]
    assert master_hosts("spark://host") == [("host", 7077)]
    assert master_hosts("local[2]") == [] and master_hosts("yarn") == []


def test_driver_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    assert driver_address("spark://127.0.0.1:7077") == "127.0.0.1"
    assert driver_address("spark://localhost:7077") == "127.0.0.1"
    assert driver_address("spark://[::1]:7077") == "127.0.0.1"
    assert driver_address("local[*]") is None
    assert driver_address("yarn") is None
    with pytest.raises(OSError):
        driver_address("spark://no-such-host.invalid:7077")
    monkeypatch.setenv("SPARK_LOCAL_IP", "10.1.2.3")
    assert driver_address("spark://127.0.0.1:7077") is None  # the user's choice stands
