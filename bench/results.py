"""A benchmark run's results: each client's run of a scenario in a round, and a scenario's runs.

Below `bench.run`, which makes them, and `bench.report`, which renders them.
"""

from __future__ import annotations

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
