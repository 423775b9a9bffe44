"""KIP-932 share sessions, one per (member, broker), sans-IO.

The first ShareFetch to a broker opens the session (epoch 0) with every partition to fetch there;
each later request carries the next epoch and only what changed: partitions added (or carrying
acknowledgements) in ``topics``, dropped ones in ``forgotten_topics_data``. Epoch -1 closes the
session, and the broker releases whatever the member still holds there. A session-level error
(VERDICTS) starts over at epoch 0; acknowledgements never ride on an opening request.
"""

from __future__ import annotations

import enum
import uuid
from typing import Any

from ..protocol import error_codes as ec
from .policy import Meanings

OPEN_EPOCH = 0
CLOSE_EPOCH = -1
_MAX_EPOCH = 2**31 - 1

Key = tuple[uuid.UUID, int]  # (topic id, partition)


class ShareSessionVerdict(enum.Enum):
    RESET = "open the session again (epoch 0)"
    REFRESH = "refresh metadata: the leader moved or the topic is unknown"
    FAIL = "report the error"


VERDICTS = Meanings(
    "share session (ShareFetch, ShareAcknowledge)",
    {
        ec.SHARE_SESSION_NOT_FOUND: ShareSessionVerdict.RESET,
        ec.INVALID_SHARE_SESSION_EPOCH: ShareSessionVerdict.RESET,
        ec.SHARE_SESSION_LIMIT_REACHED: ShareSessionVerdict.RESET,
        ec.UNKNOWN_MEMBER_ID: ShareSessionVerdict.RESET,
        ec.NOT_LEADER_OR_FOLLOWER: ShareSessionVerdict.REFRESH,
        ec.UNKNOWN_TOPIC_OR_PARTITION: ShareSessionVerdict.REFRESH,
        ec.UNKNOWN_TOPIC_ID: ShareSessionVerdict.REFRESH,
        ec.FENCED_LEADER_EPOCH: ShareSessionVerdict.REFRESH,
    },
    ShareSessionVerdict.FAIL,
)


def verdict(error_code: int) -> ShareSessionVerdict:
    return VERDICTS.meaning(error_code)


def topics_body(keys: dict[Key, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """(topic id, partition) -> acknowledgement batches, grouped by topic as the requests want."""
    by_topic: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for (topic_id, partition), acks in sorted(keys.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        by_topic.setdefault(topic_id, []).append({"partition_index": partition, "acknowledgement_batches": acks})
    return [{"topic_id": t, "partitions": parts} for t, parts in by_topic.items()]


class ShareSession:
    def __init__(self) -> None:
        self.epoch = OPEN_EPOCH
        self.partitions: set[Key] = set()  # what the broker's session holds
        self.full = 0  # requests that opened the session (statistics)
        self.incremental = 0
        self.resets = 0  # sessions started over after an error

    @property
    def is_open(self) -> bool:
        return self.epoch > OPEN_EPOCH

    def _advance(self) -> int:
        epoch = self.epoch
        self.epoch = 1 if epoch >= _MAX_EPOCH else epoch + 1
        return epoch

    def leaving(self, wanted: set[Key]) -> set[Key]:
        """What the next ShareFetch with ``wanted`` forgets (the broker releases this member's
        records there)."""
        return self.partitions - wanted if self.is_open else set()

    def fetch(self, wanted: set[Key], acks: dict[Key, list[dict[str, Any]]]) -> dict[str, Any]:
        """The session part of the next ShareFetch: epoch, topics, forgotten_topics_data. ``acks``
        must be empty while the session is not open (the caller keeps them for the next one)."""
        assert self.is_open or not acks, "no acknowledgements on a session's opening request"
        changed: dict[Key, list[dict[str, Any]]]
        if not self.is_open:
            self.full += 1
            changed = {k: [] for k in wanted}
            forgotten: set[Key] = set()
        else:
            self.incremental += 1
            changed = {k: [] for k in wanted - self.partitions}
            forgotten = self.partitions - wanted
        for key, batches in acks.items():
            changed[key] = batches
        self.partitions = set(wanted)
        forgotten_by_topic: dict[uuid.UUID, list[int]] = {}
        for topic_id, partition in sorted(forgotten, key=lambda k: (str(k[0]), k[1])):
            forgotten_by_topic.setdefault(topic_id, []).append(partition)
        return {
            "share_session_epoch": self._advance(),
            "topics": topics_body(changed),
            "forgotten_topics_data": [{"topic_id": t, "partitions": p} for t, p in forgotten_by_topic.items()],
        }

    def acknowledge(self, acks: dict[Key, list[dict[str, Any]]], *, close: bool = False) -> dict[str, Any] | None:
        """The session part of a ShareAcknowledge, or None when there is no open session to send in."""
        if not self.is_open:
            return None
        epoch = CLOSE_EPOCH if close else self._advance()
        if close:
            self._clear()
        return {"share_session_epoch": epoch, "topics": topics_body(acks)}

    def reset(self) -> None:
        """After a session-level error: the next ShareFetch opens a new session."""
        self.resets += 1
        self._clear()

    def _clear(self) -> None:
        self.epoch = OPEN_EPOCH
        self.partitions = set()
