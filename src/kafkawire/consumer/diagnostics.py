"""What the consumer's debug contexts say (`kafkawire.base.debug` writes them): group membership
(``cgrp``: joins, syncs, heartbeats, state changes with generation and member id; the KIP-848
member's epochs), the leader's assignment (``assignor``), the application's calls (``consumer``:
subscriptions, assignment changes with where each partition starts, commits, close), and fetch decisions (``fetch``: which partitions from which broker at
which offsets, what each answer became, backoffs). Callers ask ``if debug.<context>:`` first, so
nothing here runs when the context is off.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..base.debug import APP, MAIN, Debug
from ..base.model import OFFSET_BEGINNING, OFFSET_END, OFFSET_INVALID, OFFSET_STORED
from ..core.fetch_rows import Partition
from ..core.group import Membership
from ..core.kafka_error import KafkaError
from ..protocol.codec import Struct


def _error(code: int) -> str:
    return KafkaError(code).str() if code else "Success"


def group_state(debug: Debug, group: str, old: Any, m: Membership) -> None:
    debug.log(
        "cgrp",
        "CGRPSTATE",
        MAIN,
        'Group "%s" changed state %s -> %s (generation %d, member id "%s")',
        group,
        "none" if old is None else old.value,
        m.state.value,
        m.generation,
        m.member_id,
    )


def coordinator(debug: Debug, group: str, node: Any, where: str) -> None:
    if isinstance(node, int):
        debug.log("cgrp", "CGRPCOORD", MAIN, 'Group "%s" coordinator is %s', group, where)
    else:
        debug.log("cgrp", "CGRPCOORD", MAIN, 'Group "%s": no coordinator yet: %s', group, node)


def joining(debug: Debug, group: str, m: Membership, topics: list[str], where: str) -> None:
    debug.log(
        "cgrp",
        "JOIN",
        MAIN,
        '%s: Joining group "%s" with %d subscribed topic(s) and member id "%s"',
        where,
        group,
        len(topics),
        m.member_id,
    )


def join_answer(debug: Debug, response: Struct | None, error: KafkaError | None) -> None:
    if response is None:
        debug.log("cgrp", "JOINGROUP", MAIN, "JoinGroup failed: %s", error.str() if error else "no answer")
        return
    debug.log(
        "cgrp",
        "JOINGROUP",
        MAIN,
        "JoinGroup response: GenerationId %d, Protocol %s, LeaderId %s, my MemberId %s, %d member(s): %s",
        response.generation_id,
        response.get("protocol_name"),
        response.leader,
        response.member_id,
        len(response.members),
        _error(response.error_code),
    )


def sync_answer(debug: Debug, response: Struct | None, error: KafkaError | None, partitions: Any) -> None:
    if response is None:
        debug.log("cgrp", "SYNCGROUP", MAIN, "SyncGroup failed: %s", error.str() if error else "no answer")
        return
    count = sum(len(ps) for ps in partitions.values()) if isinstance(partitions, Mapping) else 0
    debug.log(
        "cgrp",
        "SYNCGROUP",
        MAIN,
        "SyncGroup response: %s (%d partition(s) assigned)",
        _error(response.error_code),
        count,
    )


def heartbeat(debug: Debug, group: str, m: Membership, where: str) -> None:
    debug.log("cgrp", "HEARTBEAT", MAIN, '%s: Heartbeat for group "%s" generation id %d', where, group, m.generation)


def heartbeat_answer(debug: Debug, group: str, code: int) -> None:
    if code:
        debug.log("cgrp", "HEARTBEAT", MAIN, 'Group "%s" heartbeat error response: %s', group, _error(code))


def assignment(debug: Debug, group: str, assignor: str, plan: Mapping[str, Any], counts: Mapping[str, int]) -> None:
    """The leader's run of the assignor: the topics it saw, then each member's share."""
    debug.log(
        "assignor",
        "ASSIGN",
        MAIN,
        'Group "%s" running %s assignor for %d member(s) over %d topic(s)',
        group,
        assignor,
        len(plan),
        len(counts),
    )
    for member, tps in plan.items():
        shown = ", ".join(f"{t} [{p}]" for t, ps in sorted(tps.items()) for p in sorted(ps))
        debug.log("assignor", "ASSIGN", MAIN, ' Member "%s" assigned: %s', member, shown or "nothing")


def commit(debug: Debug, group: str, offsets: Mapping[Any, Any], generation: int, futures: Mapping[Any, Any]) -> None:
    """An OffsetCommit started, and each partition's outcome when it comes (the future's callback)."""
    debug.log(
        "cgrp",
        "COMMIT",
        MAIN,
        'Group "%s": committing offsets for %d partition(s) with generation %d',
        group,
        len(offsets),
        generation,
    )

    def done(key: Any, fut: Any) -> None:
        error = fut.exception()
        outcome = "Success" if error is None else str(error)
        debug.log(
            "cgrp", "COMMIT", MAIN, "%s [%d]: offset %d committed: %s", key[0], key[1], offsets[key].offset, outcome
        )

    for key, fut in futures.items():
        fut.add_done_callback(functools.partial(done, key))


def fetch_sent(debug: Debug, where: str, wanted: list[tuple[Partition, int, int, int]], session: str) -> None:
    for part, _generation, offset, size in wanted:
        debug.log(
            "fetch",
            "FETCH",
            where,
            "%s: Fetch topic %s [%d] at offset %d (max %d bytes)",
            where,
            part.key[0],
            part.key[1],
            offset,
            size,
        )
    debug.log("fetch", "FETCH", where, "%s: Fetch %d partition(s) (%s)", where, len(wanted), session)


def fetch_answer(debug: Debug, where: str, part: Partition, offset: int, verdict: Any, data: Any) -> None:
    if data is None:
        debug.log(
            "fetch",
            "FETCH",
            where,
            "%s: Topic %s [%d] at offset %d: %s",
            where,
            part.key[0],
            part.key[1],
            offset,
            verdict.name,
        )
        return
    debug.log(
        "fetch",
        "FETCH",
        where,
        '%s: Topic %s [%d] at offset %d: %s, %d bytes, error "%s", HWM %d, LSO %d',
        where,
        part.key[0],
        part.key[1],
        offset,
        verdict.name,
        len(data.records or b""),
        _error(data.error_code),
        data.high_watermark,
        data.get("last_stable_offset", -1),
    )


def backoff(debug: Debug, part: Partition, now: float, error: KafkaError) -> None:
    wait = max(0.0, part.retry_at - now) * 1000
    debug.log(
        "fetch", "BACKOFF", MAIN, "%s [%d]: Fetch backoff for %.0fms: %s", part.key[0], part.key[1], wait, error.str()
    )


def lookup(debug: Debug, api: str, keys: list[Any]) -> None:
    """Start offsets asked for: ListOffsets (a logical offset) or OffsetFetch (the group's)."""
    shown = ", ".join(f"{key[0]} [{key[1]}]" for key, _generation in keys)
    debug.log("fetch", "OFFSET", MAIN, "%s for %d partition(s): %s", api, len(keys), shown)


def resolved(debug: Debug, key: Any, offset: int | None, error: KafkaError | None) -> None:
    if error is None:
        debug.log("fetch", "OFFSET", MAIN, "%s [%d]: start offset %s", key[0], key[1], offset)
    else:
        debug.log("fetch", "OFFSET", MAIN, "%s [%d]: offset lookup failed: %s", key[0], key[1], error.str())


# --- the ``consumer`` context: the application's calls, as librdkafka's consumer facilities ---

_LOGICAL = {OFFSET_BEGINNING: "BEGINNING", OFFSET_END: "END", OFFSET_STORED: "STORED", OFFSET_INVALID: "INVALID"}


def subscribed(debug: Debug, group: str, topics: list[str]) -> None:
    debug.log(
        "consumer", "SUBSCRIBE", APP, 'Group "%s": subscribe to %d topic(s): %s', group, len(topics), ", ".join(topics)
    )


def unsubscribed(debug: Debug, group: str) -> None:
    debug.log("consumer", "UNSUBSCRIBE", APP, 'Group "%s": unsubscribe: revoking the assignment and leaving', group)


def added(debug: Debug, starts: Mapping[Any, int], total: int) -> None:
    """Partitions added to the assignment, each with where it starts."""
    debug.log(
        "consumer",
        "ASSIGNMENT",
        APP,
        "Added %d partition(s) to assignment which now consists of %d partition(s)",
        len(starts),
        total,
    )
    for (topic, partition), offset in starts.items():
        shown = _LOGICAL.get(offset, str(offset))
        debug.log("consumer", "CONSUMER", APP, "Start consuming %s [%d] at offset %s", topic, partition, shown)


def removed(debug: Debug, keys: list[Any], total: int) -> None:
    debug.log(
        "consumer",
        "ASSIGNMENT",
        APP,
        "Removed %d partition(s) from assignment which now consists of %d partition(s)",
        len(keys),
        total,
    )
    for topic, partition in keys:
        debug.log("consumer", "CONSUMER", APP, "Stop consuming %s [%d]", topic, partition)


def commit_called(debug: Debug, group: str, offsets: Mapping[Any, Any], asynchronous: bool) -> None:
    shown = ", ".join(f"{t} [{p}] @ {c.offset}" for (t, p), c in offsets.items())
    how = "asynchronous" if asynchronous else "synchronous"
    debug.log(
        "consumer",
        "COMMIT",
        APP,
        'Group "%s": %s commit of %d partition(s): %s',
        group,
        how,
        len(offsets),
        shown or "nothing",
    )


def closing(debug: Debug, group: str, assigned: int) -> None:
    debug.log("consumer", "CLOSE", APP, 'Closing consumer of group "%s" (%d partition(s) assigned)', group, assigned)


# --- ``cgrp`` for the KIP-848 member (group.protocol=consumer): epochs instead of generations ---


def member_state(debug: Debug, group: str, old: Any, new: Any, epoch: int, member_id: str) -> None:
    debug.log(
        "cgrp",
        "CGRPSTATE",
        MAIN,
        'Group "%s" changed state %s -> %s (member epoch %d, member id "%s")',
        group,
        old.value,
        new.value,
        epoch,
        member_id,
    )


def member_heartbeat(debug: Debug, group: str, epoch: int, owned: int, where: str) -> None:
    debug.log(
        "cgrp",
        "HEARTBEAT",
        MAIN,
        '%s: ConsumerGroupHeartbeat for group "%s" with member epoch %d (%d topic(s) owned)',
        where,
        group,
        epoch,
        owned,
    )


def member_heartbeat_failed(debug: Debug, group: str, code: int | None, error: KafkaError | None, outcome: str) -> None:
    why = _error(code) if code else (error.str() if error is not None else "no answer")
    debug.log("cgrp", "HEARTBEAT", MAIN, 'Group "%s" ConsumerGroupHeartbeat error: %s: %s', group, why, outcome)


def member_assignment(debug: Debug, group: str, epoch: int, step: Any) -> None:
    """A change handed to the consumer, by topic name: what is assigned, revoked or lost."""

    def shown(tps: Mapping[str, Any]) -> str:
        return ", ".join(f"{t} [{p}]" for t, ps in sorted(tps.items()) for p in sorted(ps)) or "none"

    debug.log(
        "cgrp",
        "ASSIGNMENT",
        MAIN,
        'Group "%s" assignment change at member epoch %d: assigned %s; revoked %s; lost %s',
        group,
        epoch,
        shown(step.assign),
        shown(step.revoke),
        shown(step.lost),
    )
