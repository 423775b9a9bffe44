"""The loopback port a test's server is started on (kafkawire.local_broker._free_loopback_port):
free when picked, and below the kernel's ephemeral range when there is room, where no outgoing
connection can take it before the server binds it."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kafkawire import local_broker


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_picked_below_the_ephemeral_range_and_free(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("32768\t60999\n")
    monkeypatch.setattr(local_broker, "_EPHEMERAL_RANGE", ranges)
    ports = [local_broker._free_loopback_port() for _ in range(50)]
    assert all(10_000 <= p < 32768 for p in ports)
    assert len(set(ports)) > 40  # picked at random, not one after another
    assert all(_bindable(p) for p in ports[:5])


def test_a_port_in_use_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The picker's first two answers are a port held here: the third, free, is the one returned."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held, socket.socket() as other:
        held.bind(("127.0.0.1", 0))
        other.bind(("127.0.0.1", 0))
        taken, free = held.getsockname()[1], other.getsockname()[1]
        other.close()
        ranges = tmp_path / "ip_local_port_range"
        ranges.write_text(f"{max(taken, free) + 1} 65535\n")
        monkeypatch.setattr(local_broker, "_EPHEMERAL_RANGE", ranges)
        monkeypatch.setattr(local_broker, "_PORT_PICKS", _Answers([taken, taken, free]))
        assert local_broker._free_loopback_port() == free


class _Answers:
    """A picker whose randrange gives these answers in turn."""

    def __init__(self, answers: list[int]) -> None:
        self._answers = answers

    def randrange(self, start: int, stop: int) -> int:
        answer = self._answers.pop(0)
        assert start <= answer < stop
        return answer


def test_without_the_kernel_range_the_kernel_picks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(local_broker, "_EPHEMERAL_RANGE", tmp_path / "missing")
    port = local_broker._free_loopback_port()
    assert port > 0 and _bindable(port)
