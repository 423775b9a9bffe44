"""Error policies: for each request family, what each error code means, as one table.

Every table is a `Policy`: a name (the request family), the codes it lists, and the meaning of any
code (listed or not). Two forms: `ErrorPolicy` maps a named error code (broker codes from
`kafkawire.protocol.error_codes`, local codes from `KafkaError`) to an `Action` of the request
driver, codes it does not list falling back on Kafka's ``retriable`` flag; `Meanings` maps codes to
a family's own verdicts (a group member's, a transaction's), with one meaning for every code it
does not list. docs/errors.md is the matrix of them all (tests/unit/core/test_error_matrix.py).
The request driver (`kafkawire.client.driver`) and the state machines act on the answer; no code
here does IO.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from ...protocol import error_table as broker_errors
from ..kafka_error import KafkaError


class Action(enum.Enum):
    SUCCEED = "succeed"  # the error means success for this call (a peer's quirk)
    RETRY = "retry"  # ask the same broker again after a backoff
    REFRESH_METADATA = "refresh metadata"  # the route is stale: refresh, route again, ask again
    REFIND_COORDINATOR = "refind coordinator"  # the coordinator moved: find it again, ask again
    FAIL = "fail"  # final for this call


M = TypeVar("M", bound=enum.Enum)


class Policy(Generic[M]):
    """A request family's error table: ``name``, the codes ``table`` lists, the meaning of any code."""

    name: str
    table: Mapping[int, M]

    def meaning(self, code: int) -> M:
        raise NotImplementedError

    def otherwise(self) -> str:
        """What an unlisted code means, in words (docs/errors.md)."""
        raise NotImplementedError


class ErrorPolicy(Policy[Action]):
    """``table`` decides; an unlisted broker code is ``retriable`` when Kafka flags it retriable,
    else ``final``; an unlisted local code is ``local``. (A plain class: a dataclass cost about a
    millisecond of every client's start-up to create.)"""

    __slots__ = ("final", "local", "name", "retriable", "table")

    def __init__(
        self,
        name: str,
        table: Mapping[int, Action] | None = None,
        retriable: Action = Action.RETRY,
        local: Action = Action.FAIL,
        final: Action = Action.FAIL,
    ) -> None:
        self.name = name
        self.table = {} if table is None else table
        self.retriable = retriable
        self.local = local
        self.final = final

    def __repr__(self) -> str:
        return f"ErrorPolicy({self.name!r})"

    def meaning(self, code: int) -> Action:
        return self.action(code)

    def otherwise(self) -> str:
        return f"retriable: {self.retriable.name}, else {self.final.name}; local: {self.local.name}"

    def action(self, code: int) -> Action:
        found = self.table.get(code)
        if found is not None:
            return found
        if code < -1:
            return self.local
        return self.retriable if broker_errors.error_for(code).retriable else self.final

    def of(self, error: KafkaError) -> Action:
        return self.action(error.code())

    def extend(self, name: str, more: Mapping[int, Action]) -> ErrorPolicy:
        """This policy with some codes decided differently (a call's own rules)."""
        return ErrorPolicy(name, {**self.table, **more}, self.retriable, self.local, self.final)


# Local failures of a whole request (no answer came back, or one that could not be read).
LOST_ANSWER = (KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._BAD_MSG)


class Meanings(Policy[M], Mapping[int, M]):
    """A family's own verdicts: ``table`` decides, any code it does not list means ``default``.
    Read as the mapping of the codes it lists (``code in VERDICTS``, ``{**VERDICTS, ...}``)."""

    def __init__(self, name: str, table: Mapping[int, M], default: M) -> None:
        self.name = name
        self.table = dict(table)
        self.default = default

    def meaning(self, code: int) -> M:
        return self.table.get(code, self.default)

    def otherwise(self) -> str:
        return self.default.name

    def __getitem__(self, code: int) -> M:
        return self.table[code]

    def __iter__(self) -> Iterator[int]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)

    def __repr__(self) -> str:
        return f"Meanings({self.name!r}, {len(self.table)} codes, otherwise {self.default.name})"
