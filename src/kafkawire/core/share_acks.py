"""A share consumer's acknowledgement bookkeeping (KIP-932), sans-IO.

Records handed to the application by a poll are *in flight* until acknowledged: ACCEPT (done),
RELEASE (deliver again, maybe elsewhere, with a higher delivery count) or REJECT (never again).
In implicit mode the whole previous poll is accepted at the next poll or commit (not at close:
the broker releases it then); in explicit mode the application acknowledges each record, must have
acknowledged all of them before its next poll, and a commit sends only what it acknowledged. Acquired offsets that hold no record the application
can see (compacted away, control records) are acknowledged as GAP as soon as they arrive.
Acknowledgements wait here, *pending*, until the IO side takes them for a ShareFetch or a
ShareAcknowledge to the partition's leader, encoded as batches of consecutive offsets with one type.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

from . import TopicPartitionKey as TP

GAP = 0
ACCEPT = 1
RELEASE = 2
REJECT = 3
ACK_TYPES = {ACCEPT: "ACCEPT", RELEASE: "RELEASE", REJECT: "REJECT"}  # what an application may send

IMPLICIT = "implicit"
EXPLICIT = "explicit"
MODES = (IMPLICIT, EXPLICIT)


class Refusal(enum.Enum):
    """Why an acknowledgement or a poll is refused (the face turns each into its exception)."""

    IMPLICIT_MODE = "acknowledge() needs share.acknowledgement.mode=explicit"
    NOT_IN_FLIGHT = (
        "the record is not in flight: it was not returned by the last poll(), or was acknowledged and committed already"
    )
    BAD_TYPE = "ack_type must be AcknowledgeType.ACCEPT, RELEASE or REJECT"
    UNACKNOWLEDGED = (
        "in explicit acknowledgement mode every record of the previous poll() must be acknowledged before the next"
    )


def batches(types: dict[int, int]) -> list[dict[str, Any]]:
    """Offsets -> ack type as the wire's acknowledgement batches: runs of consecutive offsets of one
    type, each ``{first_offset, last_offset, acknowledge_types: [type]}``, in offset order."""
    out: list[dict[str, Any]] = []
    for offset in sorted(types):
        kind = types[offset]
        last = out[-1] if out else None
        if last is not None and last["last_offset"] == offset - 1 and last["acknowledge_types"][0] == kind:
            last["last_offset"] = offset
        else:
            out.append({"first_offset": offset, "last_offset": offset, "acknowledge_types": [kind]})
    return out


def acquired_offsets(ranges: Iterable[Any]) -> dict[int, int]:
    """A ShareFetch partition's acquired_records as offset -> delivery count."""
    counts: dict[int, int] = {}
    for r in ranges:
        for offset in range(r.first_offset, r.last_offset + 1):
            counts[offset] = r.delivery_count
    return counts


class Acknowledgements:
    def __init__(self, mode: str = IMPLICIT) -> None:
        if mode not in MODES:
            raise ValueError(f"share.acknowledgement.mode must be one of {MODES}, not {mode!r}")
        self.mode = mode
        self._in_flight: dict[TP, dict[int, int | None]] = {}  # delivered by the last poll -> type chosen
        self._pending: dict[TP, dict[int, int]] = {}  # ready to send
        self._sending: dict[TP, set[int]] = {}  # taken for a ShareAcknowledge not yet on its way

    def delivered(self, records: Iterable[tuple[TP, int]]) -> None:
        """The records a poll hands to the application."""
        for tp, offset in records:
            self._in_flight.setdefault(tp, {})[offset] = None

    def gaps(self, tp: TP, offsets: Iterable[int]) -> None:
        pending = self._pending.setdefault(tp, {})
        for offset in offsets:
            pending[offset] = GAP

    def acknowledge(self, tp: TP, offset: int, kind: int) -> Refusal | None:
        if self.mode == IMPLICIT:
            return Refusal.IMPLICIT_MODE
        if kind not in ACK_TYPES:
            return Refusal.BAD_TYPE
        offsets = self._in_flight.get(tp)
        if offsets is None or offset not in offsets:
            return Refusal.NOT_IN_FLIGHT
        offsets[offset] = kind
        return None

    def before_poll(self) -> Refusal | None:
        """Settle the previous poll's records: implicit mode accepts them all; explicit mode
        refuses the poll while any is unacknowledged."""
        if self.mode == EXPLICIT and any(k is None for offsets in self._in_flight.values() for k in offsets.values()):
            return Refusal.UNACKNOWLEDGED
        self._settle()
        return None

    def before_commit(self) -> None:
        """Make what is acknowledged pending (implicit mode: every in-flight record, as ACCEPT)."""
        self._settle()

    def before_close(self) -> None:
        """Make pending only what the application acknowledged itself: as librdkafka's, closing
        (or unsubscribing) accepts nothing implicitly; the broker releases the last poll's records
        to the group as the sessions close."""
        self._settle(implicit=False)

    def _settle(self, implicit: bool = True) -> None:
        for tp, offsets in list(self._in_flight.items()):
            pending = self._pending.setdefault(tp, {})
            for offset, kind in list(offsets.items()):
                if kind is None and (self.mode == EXPLICIT or not implicit):
                    continue
                pending[offset] = ACCEPT if kind is None else kind
                del offsets[offset]
            if not offsets:
                del self._in_flight[tp]

    def holds(self, tp: TP, offset: int) -> bool:
        """The record is with the application or its acknowledgement not sent yet: an answer naming
        it acquired again (a broker repeating what this member still holds) must not deliver it twice."""
        return any(offset in book.get(tp, ()) for book in (self._in_flight, self._pending, self._sending))

    def held(self, tps: Iterable[TP]) -> dict[TP, set[int]]:
        """`holds` for whole partitions, as a snapshot: what a ShareFetch leaving now will find
        listed again in its answer even if its acknowledgement is sent before the answer comes."""
        out: dict[TP, set[int]] = {}
        for tp in tps:
            offsets = set(self._in_flight.get(tp, ())) | set(self._pending.get(tp, ())) | self._sending.get(tp, set())
            if offsets:
                out[tp] = offsets
        return out

    def unsettled(self, tps: Iterable[TP]) -> set[TP]:
        """Those of ``tps`` with records the application has not acknowledged yet, or whose
        acknowledgements are taken but not on their way."""
        return {tp for tp in tps if self._in_flight.get(tp) or self._sending.get(tp)}

    def take(self, tps: Iterable[TP] | None = None, *, until_sent: bool = False) -> dict[TP, dict[int, int]]:
        """Remove and return the pending acknowledgements (of ``tps``; all when None). ``until_sent``:
        they are still held until `sent` (taken on one thread, sent from another: a ShareFetch
        leaving in between is answered before they are applied)."""
        keys = list(self._pending) if tps is None else [tp for tp in tps if tp in self._pending]
        out = {tp: types for tp in keys if (types := self._pending.pop(tp))}
        if until_sent:
            for tp, types in out.items():
                self._sending.setdefault(tp, set()).update(types)
        return out

    def sent(self, taken: dict[TP, dict[int, int]]) -> None:
        """The request carrying what `take(until_sent=True)` returned is on its way."""
        for tp, types in taken.items():
            offsets = self._sending.get(tp)
            if offsets is not None:
                offsets.difference_update(types)
                if not offsets:
                    del self._sending[tp]

    def forget(self, tps: Iterable[TP]) -> None:
        """Partitions no longer assigned: their in-flight records can no longer be acknowledged."""
        for tp in tps:
            self._in_flight.pop(tp, None)

    def clear(self) -> None:
        """Forget everything (the sessions are closing: the brokers release what was not acknowledged)."""
        self._in_flight.clear()
        self._pending.clear()
        self._sending.clear()

    def in_flight_count(self) -> int:
        return sum(len(offsets) for offsets in self._in_flight.values())


class AcknowledgeType(enum.IntEnum):
    """What the application tells the broker to do with a record (confluent-kafka's values)."""

    ACCEPT = ACCEPT
    RELEASE = RELEASE
    REJECT = REJECT
