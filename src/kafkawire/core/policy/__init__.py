"""Error policies: for each API family, what a client does about each error, as one table.

A policy maps a named error code (broker codes from `kafkawire.protocol.error_codes`, local codes
from `KafkaError`) to an `Action`; codes a table does not list fall back on Kafka's ``retriable``
flag. The request driver (`kafkawire.client.driver`) and the producer's verdict
(`kafkawire.core.produce_verdict`) act on the answer; no code here does IO.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...protocol import error_table as broker_errors
from ..kafka_error import KafkaError


class Action(enum.Enum):
    SUCCEED = "succeed"  # the error means success for this call (a peer's quirk)
    RETRY = "retry"  # ask the same broker again after a backoff
    REFRESH_METADATA = "refresh metadata"  # the route is stale: refresh, route again, ask again
    REFIND_COORDINATOR = "refind coordinator"  # the coordinator moved: find it again, ask again
    FAIL = "fail"  # final for this call


@dataclass(frozen=True)
class ErrorPolicy:
    """``table`` decides; an unlisted broker code is ``retriable`` (Kafka's flag) or FAIL; an
    unlisted local code is ``local``."""

    name: str
    table: Mapping[int, Action] = field(default_factory=dict)
    retriable: Action = Action.RETRY
    local: Action = Action.FAIL

    def action(self, code: int) -> Action:
        found = self.table.get(code)
        if found is not None:
            return found
        if code < -1:
            return self.local
        return self.retriable if broker_errors.error_for(code).retriable else Action.FAIL

    def of(self, error: KafkaError) -> Action:
        return self.action(error.code())

    def extend(self, name: str, more: Mapping[int, Action]) -> ErrorPolicy:
        """This policy with some codes decided differently (a call's own rules)."""
        return ErrorPolicy(name, {**self.table, **more}, self.retriable, self.local)


# Local failures of a whole request (no answer came back, or one that could not be read).
LOST_ANSWER = (KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._BAD_MSG)
