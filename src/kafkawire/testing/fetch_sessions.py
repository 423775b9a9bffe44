"""KIP-227 fetch sessions on the broker side: a full Fetch opens one, incremental ones change it.

Sans-IO. A session remembers, per partition, the fetch position and what the reader last saw of
the watermarks, so an incremental answer carries only the partitions that changed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from kafkawire.protocol import error_codes as E

MAX_SESSIONS = 1000
FINAL_EPOCH = -1
INITIAL_EPOCH = 0

PartitionKey = tuple[str, int]


@dataclass
class Session:
    session_id: int
    epoch: int
    partitions: dict[PartitionKey, dict[str, Any]] = field(default_factory=dict)  # the request's entry
    seen: dict[PartitionKey, tuple[int, int, int]] = field(default_factory=dict)  # hwm, lso, log start


class FetchSessions:
    def __init__(self) -> None:
        self._sessions: dict[int, Session] = {}
        self._ids = itertools.count(1)

    def open(
        self, session_id: int, epoch: int, entries: dict[PartitionKey, dict[str, Any]], forgotten: list[PartitionKey]
    ) -> tuple[int, Session | None, dict[PartitionKey, dict[str, Any]]]:
        """(error, session or None for a sessionless fetch, the partitions to read)."""
        if session_id == 0:
            if epoch == FINAL_EPOCH:
                return E.NONE, None, entries
            if epoch != INITIAL_EPOCH:
                return E.INVALID_FETCH_SESSION_EPOCH, None, {}
            if len(self._sessions) >= MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            session = Session(next(self._ids), 1, dict(entries))
            self._sessions[session.session_id] = session
            return E.NONE, session, entries
        found = self._sessions.get(session_id)
        if found is None:
            return E.FETCH_SESSION_ID_NOT_FOUND, None, {}
        session = found
        if epoch == FINAL_EPOCH:
            del self._sessions[session_id]
            return E.NONE, None, entries
        if epoch != session.epoch:
            return E.INVALID_FETCH_SESSION_EPOCH, None, {}
        session.epoch += 1
        for key in forgotten:
            session.partitions.pop(key, None)
            session.seen.pop(key, None)
        session.partitions.update(entries)
        return E.NONE, session, dict(session.partitions)


def changed(session: Session | None, key: PartitionKey, answer: dict[str, Any], requested: bool) -> bool:
    """Should an incremental answer carry this partition? (A full one carries every partition.)"""
    if session is None or session.epoch == 1:
        return True
    marks = (answer["high_watermark"], answer.get("last_stable_offset", -1), answer.get("log_start_offset", -1))
    before = session.seen.get(key)
    session.seen[key] = marks
    return requested or bool(answer.get("records")) or answer["error_code"] != E.NONE or before != marks
