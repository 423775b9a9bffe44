"""A benchmark run's results: each client's run of a scenario in a round, and a scenario's runs;
and what a scale curve is (bench/scale.py).

Below `bench.run`, which makes them, and `bench.report`, which renders them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench.scenarios import Scenario


@dataclass
class Run:
    client: str
    round: int
    result: dict[str, Any]
    verified: int | None = None  # records the broker holds, or None when not checked
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None and "skipped" not in self.result


@dataclass
class ScenarioResult:
    scenario: Scenario
    runs: list[Run] = field(default_factory=list)

    def of(self, client: str) -> list[Run]:
        return [r for r in self.runs if r.client == client]


@dataclass(frozen=True)
class Series:
    """One line of a curve: a workload at each x, run by a kafkawire client and its confluent-kafka
    counterpart (bench.worker's client names)."""

    name: str
    clients: dict[str, str]  # KAFKAWIRE / CONFLUENT -> worker client name
    scenario: Callable[[int, bool], Scenario]  # (x, quick) -> the workload at x
    partitions: Callable[[int], int]  # x -> partitions per topic


@dataclass(frozen=True)
class Curve:
    name: str
    x_label: str
    xs: tuple[int, ...]
    series: tuple[Series, ...]
    unit: str  # what one unit of work is, for "CPU per ..."
