"""A broker's incremental fetch session (KIP-227), sans IO: what each Fetch to it must carry.

The consumer keeps one session per broker it fetches from (consumer/fetch_engine.py holds them on
the IO thread; one Fetch in flight per broker, as the epochs require), as Java's
FetchSessionHandler does:

- no session (id 0, epoch 0): a full Fetch carries every partition and asks the broker for a
  session; an answer naming a session id starts it at epoch 1. An answer with id 0 (a broker that
  keeps none) leaves every Fetch full, as below Fetch v7 (epoch -1: no session asked for);
- in a session: the Fetch carries the next epoch, only the partitions new to the session or whose
  fetch offset or size changed since they were last sent, and names in ``forgotten_topics_data``
  the ones no longer fetched (unassigned, paused, backing off, waiting for room, moved to another
  broker). The answer lists only partitions with records or news: the others keep their state;
- a Fetch that fails as a whole or gets no answer ends the session (`AFTER_ERROR`): the next Fetch
  is full with epoch 0, under the old id so that the broker drops that session at once, or id 0
  when the broker says it has no session by that id;
- `close`: a Fetch with epoch -1 and no partitions frees the broker's session.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol import error_codes as ec
from . import TopicPartitionKey
from .kafka_error import KafkaError
from .policy import Meanings

FIRST_VERSION = 7  # the first Fetch version with sessions
NO_SESSION = 0  # the session id of "no session"
INITIAL_EPOCH = 0  # a full Fetch that asks for a (new) session
FINAL_EPOCH = -1  # a full Fetch that wants no session (and closes the one named)
MAX_EPOCH = 2**31 - 1  # epochs wrap from here back to 1

Wanted = tuple[TopicPartitionKey, int, int]
"""A partition a Fetch reads: (partition, fetch offset, partition max bytes)."""


class AfterError(enum.Enum):
    REOPEN = "reopen"  # full Fetch under the old id: the broker closes it and makes a new one
    NEW = "new"  # full Fetch with id 0: the broker has no session by that id


# What a whole-request error (or a lost answer, code 0 here) does to the session; any other
# code reopens it, as Java's client does.
AFTER_ERROR = Meanings(
    "fetch session (Fetch, KIP-227)",
    {
        ec.FETCH_SESSION_ID_NOT_FOUND: AfterError.NEW,
        ec.INVALID_FETCH_SESSION_EPOCH: AfterError.REOPEN,
        ec.FETCH_SESSION_TOPIC_ID_ERROR: AfterError.REOPEN,
    },
    AfterError.REOPEN,
)


@dataclass(frozen=True)
class SessionRequest:
    """What one Fetch carries: its session fields, the partitions written in it, the ones to forget."""

    session_id: int
    epoch: int
    send: list[Wanted]
    forget: list[TopicPartitionKey] = field(default_factory=list)

    @property
    def incremental(self) -> bool:
        return self.epoch > INITIAL_EPOCH


class FetchSession:
    """One broker's session: its id, the next epoch, and each partition as last sent to it."""

    def __init__(self) -> None:
        self.id = NO_SESSION
        self.epoch = INITIAL_EPOCH
        self._parts: dict[TopicPartitionKey, tuple[int, int]] = {}  # key -> (offset, max bytes) last sent
        self._awaiting: SessionRequest | None = None  # the request sent, until its answer
        self.full = 0  # counters for statistics: full and incremental Fetches built,
        self.incremental = 0
        self.resets = 0  # sessions ended by an error or a lost answer

    def request(self, wanted: list[Wanted], version: int) -> SessionRequest:
        """The next Fetch for ``wanted`` (every partition this broker should read now)."""
        if self._awaiting is not None:  # the last one was never answered (sent again elsewhere)
            self.lost()
        if version < FIRST_VERSION:
            req = SessionRequest(NO_SESSION, FINAL_EPOCH, list(wanted))
            self.full += 1
        elif self.epoch == INITIAL_EPOCH:
            self._parts = {key: (offset, size) for key, offset, size in wanted}
            req = SessionRequest(self.id, INITIAL_EPOCH, list(wanted))
            self.full += 1
        else:
            parts = self._parts
            send = [w for w in wanted if parts.get(w[0]) != (w[1], w[2])]
            keep = {w[0] for w in wanted}
            forget = [key for key in parts if key not in keep]
            self._parts = {key: (offset, size) for key, offset, size in wanted}
            req = SessionRequest(self.id, self.epoch, send, forget)
            self.incremental += 1
        self._awaiting = req
        return req

    def answered(self, error_code: int, session_id: int, keys: Iterable[TopicPartitionKey]) -> bool:
        """The answer to the last request: its top-level error, session id and the partitions it
        lists. False when its partitions must not be believed (the session was reset)."""
        req, self._awaiting = self._awaiting, None
        if req is None or req.epoch == FINAL_EPOCH:
            return error_code == 0
        if error_code:
            self._reset(AFTER_ERROR.meaning(error_code))
            return False
        if any(key not in self._parts for key in keys):  # partitions never asked for: not our session
            self._reset(AfterError.REOPEN)
            return False
        if session_id == NO_SESSION:  # none made, or the broker closed it: full Fetches again
            self.id, self.epoch = NO_SESSION, INITIAL_EPOCH
        elif not req.incremental:
            self.id, self.epoch = session_id, 1
        elif session_id != self.id:
            self._reset(AfterError.REOPEN)
            return False
        else:
            self.epoch = 1 if self.epoch == MAX_EPOCH else self.epoch + 1
        return True

    def answer_error(self, response: Any, keys: Iterable[TopicPartitionKey]) -> KafkaError | None:
        """`answered` for a Fetch answer: its whole-request error, or None when its partitions hold."""
        code = response.get("error_code", 0)
        if self.answered(code, response.get("session_id", NO_SESSION), keys):
            return None
        if code:
            return KafkaError(code, "Fetch failed as a whole")
        return KafkaError(KafkaError._BAD_MSG, "Fetch answered partitions outside its session")

    def lost(self) -> None:
        """The last request got no answer (connection lost, timed out, never sent): what the broker
        made of it is unknown, so a session starts over."""
        req, self._awaiting = self._awaiting, None
        if req is not None and self.id != NO_SESSION:
            self._reset(AfterError.REOPEN)

    def _reset(self, how: AfterError) -> None:
        self.resets += 1
        if how is AfterError.NEW:
            self.id = NO_SESSION
        self.epoch = INITIAL_EPOCH
        self._parts = {}

    def close(self) -> SessionRequest | None:
        """The Fetch that frees the broker's session (epoch -1, no partitions), or None without one."""
        if self.id == NO_SESSION:
            return None
        req = SessionRequest(self.id, FINAL_EPOCH, [])
        self.id, self.epoch, self._parts, self._awaiting = NO_SESSION, INITIAL_EPOCH, {}, None
        return req


def session_fields(req: SessionRequest, topic_id: Callable[[str], Any]) -> dict[str, Any]:
    """The Fetch's ``topics`` and ``forgotten_topics_data`` for ``req``, grouped by topic (by name up
    to v12, by ``topic_id(name)`` from v13)."""
    topics: dict[str, list[dict[str, Any]]] = {}
    for (topic, partition), offset, size in req.send:
        topics.setdefault(topic, []).append(
            {"partition": partition, "fetch_offset": offset, "partition_max_bytes": size}
        )
    forgotten: dict[str, list[int]] = {}
    for topic, partition in req.forget:
        forgotten.setdefault(topic, []).append(partition)
    return {
        "session_id": req.session_id,
        "session_epoch": req.epoch,
        "topics": [{"topic": t, "topic_id": topic_id(t), "partitions": ps} for t, ps in topics.items()],
        "forgotten_topics_data": [
            {"topic": t, "topic_id": topic_id(t), "partitions": ps} for t, ps in forgotten.items()
        ],
    }


def answered_partitions(response: Any, by_id: Mapping[Any, str]) -> dict[TopicPartitionKey, Any]:
    """A Fetch answer's partitions by key (topics named by id from v13 through ``by_id``)."""
    out: dict[TopicPartitionKey, Any] = {}
    for topic in response.responses:
        name = topic.get("topic") or by_id.get(topic.get("topic_id"), "")
        for data in topic.partitions:
            out[(name, data.partition_index)] = data
    return out


# The part of a Fetch's max_bytes the partitions with nothing known to read get while others are
# behind (partition_shares).
IDLE_SHARE = 0.25


def partition_share(max_bytes: int, count: int) -> int:
    """Each partition's size in a Fetch of ``max_bytes`` over ``count`` partitions: an equal share,
    rounded down to a power of two so that it rarely changes (a change is sent again in a session)."""
    share = max(1, max_bytes // max(1, count))
    return 1 << (share.bit_length() - 1)


def partition_shares(max_bytes: int, count: int, behind: int) -> tuple[int, int]:
    """The sizes in a Fetch of ``max_bytes`` over ``count`` partitions of which ``behind`` are
    known to have records past the fetch offset (their last answer's high watermark): (the others'
    share, theirs). The shares sum to at most ``max_bytes``, so that a broker that keeps only the
    partition limits (Tansu) brings back no more. Past the answer's first partition a broker sends
    nothing of a batch larger than the partition's limit (Kafka's one-record minimum is for the
    first only), so an equal share over thousands of mostly idle partitions would bring a backlog
    of large batches one partition per round: while some are behind, they share IDLE_SHARE's
    complement and the idle ones (caught up, or not answered yet) IDLE_SHARE of the request."""
    equal = partition_share(max_bytes, count)
    if not behind or behind >= count:
        return equal, equal
    idle = min(equal, partition_share(int(max_bytes * IDLE_SHARE), count - behind))
    return idle, max(equal, partition_share(max_bytes - idle * (count - behind), behind))
