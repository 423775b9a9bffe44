"""FindCoordinator and the group APIs (classic and KIP-848), answered by the group's coordinator."""

from __future__ import annotations

from typing import Any

from kafkawire.protocol import error_codes as E

from .consumer_groups import ConsumerGroup
from .groups import DEAD, Group
from .state import COORDINATOR_KINDS, GROUP, TRANSACTION
from .world import Answer, Handler, Parked, Request, World

_KIND_BY_TYPE = {code: kind for kind, code in COORDINATOR_KINDS.items()}
MEMBER_ID_REQUIRED_VERSION = 4


def coordinator_error(world: World, req: Request, kind: str, key: str) -> int:
    return E.NONE if world.state.coordinator(kind, key) == req.broker_id else E.NOT_COORDINATOR


def find_coordinator(world: World, req: Request) -> dict[str, Any]:
    kind = _KIND_BY_TYPE.get(req.body.key_type, "")
    keys = req.body.coordinator_keys if req.version >= 4 else [req.body.key]
    found = []
    for key in keys:
        if kind not in (GROUP, TRANSACTION):
            found.append({"key": key, "error_code": E.INVALID_REQUEST, "node_id": -1, "host": "", "port": -1})
            continue
        broker = world.state.brokers[world.state.coordinator(kind, key)]
        found.append(
            {"key": key, "error_code": E.NONE, "node_id": broker.node_id, "host": broker.host, "port": broker.port}
        )
    if req.version >= 4:
        return {"coordinators": found}
    return {k: v for k, v in found[0].items() if k != "key"}


def any_group(world: World, group_id: str) -> Group | ConsumerGroup | None:
    return world.consumer_groups.groups.get(group_id) or world.groups.get(group_id)


def join_group(world: World, req: Request) -> Answer:
    body = req.body
    error = coordinator_error(world, req, GROUP, body.group_id)
    if not error and body.group_id in world.consumer_groups.groups:
        error = E.INCONSISTENT_GROUP_PROTOCOL
    if error:
        return {"error_code": error, "member_id": body.member_id}
    groups = world.groups
    group = groups.get(body.group_id, create=True)
    assert group is not None
    if not body.member_id and req.version >= MEMBER_ID_REQUIRED_VERSION and body.group_instance_id is None:
        member_id = groups.new_member_id(req.header.client_id or "")
        groups.pending.add(member_id)
        return {"error_code": E.MEMBER_ID_REQUIRED, "member_id": member_id}
    error, member_id = groups.join(group, body.member_id, body, req.header.client_id or "", req.now_ms)
    if error:
        return {"error_code": error, "member_id": member_id}
    return Parked(lambda now, expired: groups.join_result(group, member_id, now, expired), group.rebalance_deadline_ms)


def sync_group(world: World, req: Request) -> Answer:
    body = req.body
    group = world.groups.get(body.group_id)
    error = coordinator_error(world, req, GROUP, body.group_id)
    if not error:
        error = E.UNKNOWN_MEMBER_ID if group is None else world.groups.sync(group, body, req.now_ms)
    if error or group is None:
        return {"error_code": error}
    member = group.members[body.member_id]
    return Parked(
        lambda now, expired: world.groups.sync_result(group, body.member_id, body.generation_id, expired),
        req.now_ms + member.session_timeout_ms,
    )


def heartbeat(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    group = world.groups.get(body.group_id)
    error = coordinator_error(world, req, GROUP, body.group_id)
    if not error:
        error = (
            E.UNKNOWN_MEMBER_ID
            if group is None
            else world.groups.heartbeat(group, body.member_id, body.generation_id, req.now_ms)
        )
    return {"error_code": error}


def leave_group(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    group = world.groups.get(body.group_id)
    error = coordinator_error(world, req, GROUP, body.group_id)
    if error:
        return {"error_code": error}
    leaving = (
        [(m.member_id, m.group_instance_id) for m in body.members] if req.version >= 3 else [(body.member_id, None)]
    )
    members = []
    for member_id, instance_id in leaving:
        if group is not None and not member_id and instance_id is not None:
            member_id = next((m.member_id for m in group.members.values() if m.instance_id == instance_id), "")
        result = E.UNKNOWN_MEMBER_ID if group is None else world.groups.leave(group, member_id, req.now_ms)
        members.append({"member_id": member_id, "group_instance_id": instance_id, "error_code": result})
    if req.version >= 3:
        return {"error_code": E.NONE, "members": members}
    return {"error_code": members[0]["error_code"]}


def offset_commit(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    error = coordinator_error(world, req, GROUP, body.group_id)
    group = any_group(world, body.group_id)
    if not error:
        if isinstance(group, ConsumerGroup):
            error = world.consumer_groups.commit_check(group, body.member_id, body.generation_id_or_member_epoch)
        else:
            group = group or world.groups.get(body.group_id, create=True)
            assert isinstance(group, Group)
            error = world.groups.commit_check(group, body.member_id, body.generation_id_or_member_epoch, req.now_ms)
    topics = []
    for t in body.topics:
        parts = []
        for p in t.partitions:
            parts.append({"partition_index": p.partition_index, "error_code": error})
            if not error and group is not None:
                group.offsets[(t.name, p.partition_index)] = (
                    p.committed_offset,
                    p.committed_metadata,
                    p.committed_leader_epoch,
                )
        topics.append({"name": t.name, "partitions": parts})
    return {"topics": topics}


def commit_offsets(world: World, group_id: str, offsets: dict[tuple[str, int], tuple[int, str | None, int]]) -> None:
    """A committed transaction's offsets, written into its group."""
    group = any_group(world, group_id) or world.groups.get(group_id, create=True)
    assert group is not None
    group.offsets.update(offsets)


def offset_fetch(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    asked = (
        [(g.group_id, g.topics) for g in body.groups]
        if req.version >= 8
        else [
            (
                body.group_id,
                None
                if body.topics is None
                else [{"name": t.name, "partition_indexes": t.partition_indexes} for t in body.topics],
            )
        ]
    )
    answers = []
    for group_id, topics in asked:
        error = coordinator_error(world, req, GROUP, group_id)
        group = any_group(world, group_id)
        offsets = group.offsets if group is not None else {}
        unstable = world.transactions.pending_offsets(group_id) if body.require_stable else set()
        if topics is None:
            wanted: dict[str, list[int]] = {}
            for name, index in sorted(offsets):
                wanted.setdefault(name, []).append(index)
        else:
            wanted = {
                t["name"] if isinstance(t, dict) else t.name: list(
                    t["partition_indexes"] if isinstance(t, dict) else t.partition_indexes
                )
                for t in topics
            }
        out = []
        for name, indexes in wanted.items():
            parts = []
            for index in indexes:
                offset, metadata, epoch = offsets.get((name, index), (-1, "", -1))
                parts.append(
                    {
                        "partition_index": index,
                        "committed_offset": offset,
                        "committed_leader_epoch": epoch,
                        "metadata": metadata,
                        "error_code": E.UNSTABLE_OFFSET_COMMIT if (name, index) in unstable else E.NONE,
                    }
                )
            out.append({"name": name, "partitions": parts})
        answers.append({"group_id": group_id, "topics": [] if error else out, "error_code": error})
    if req.version >= 8:
        return {"groups": answers}
    return {"topics": answers[0]["topics"], "error_code": answers[0]["error_code"]}


def list_groups(world: World, req: Request) -> dict[str, Any]:
    out = []
    everything: list[Group | ConsumerGroup] = [*world.groups.groups.values(), *world.consumer_groups.groups.values()]
    for group in everything:
        if group.state == DEAD or world.state.coordinator(GROUP, group.group_id) != req.broker_id:
            continue
        if req.body.states_filter and group.state not in req.body.states_filter:
            continue
        out.append(
            {
                "group_id": group.group_id,
                "protocol_type": "consumer" if isinstance(group, ConsumerGroup) else group.protocol_type,
                "group_state": group.state,
                "group_type": group.kind,
            }
        )
    return {"error_code": E.NONE, "groups": out}


def describe_groups(world: World, req: Request) -> dict[str, Any]:
    out = []
    for group_id in req.body.groups:
        error = coordinator_error(world, req, GROUP, group_id)
        group = world.groups.get(group_id)
        if error or group is None:
            out.append({"group_id": group_id, "error_code": error, "group_state": "Dead" if not error else ""})
            continue
        out.append(
            {
                "group_id": group_id,
                "error_code": E.NONE,
                "group_state": group.state,
                "protocol_type": group.protocol_type,
                "protocol_data": group.protocol or "",
                "members": [
                    {
                        "member_id": m.member_id,
                        "group_instance_id": m.instance_id,
                        "client_id": m.client_id,
                        "client_host": "/127.0.0.1",
                        "member_metadata": next((meta for n, meta in m.protocols if n == group.protocol), b""),
                        "member_assignment": m.assignment,
                    }
                    for m in group.members.values()
                ],
            }
        )
    return {"groups": out}


def delete_groups(world: World, req: Request) -> dict[str, Any]:
    results = []
    for group_id in req.body.groups_names:
        error = coordinator_error(world, req, GROUP, group_id)
        group = any_group(world, group_id)
        if not error and group is None:
            error = E.GROUP_ID_NOT_FOUND
        elif not error and group is not None and group.members:
            error = E.NON_EMPTY_GROUP
        elif not error:
            world.groups.groups.pop(group_id, None)
            world.consumer_groups.groups.pop(group_id, None)
        results.append({"group_id": group_id, "error_code": error})
    return {"results": results}


def consumer_group_heartbeat(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    error = coordinator_error(world, req, GROUP, body.group_id)
    classic = world.groups.get(body.group_id)
    if not error and classic is not None and classic.members:
        error = E.GROUP_ID_NOT_FOUND
    if error:
        return {"error_code": error, "member_id": body.member_id}
    groups = world.consumer_groups
    group = groups.groups.get(body.group_id)
    if group is None:
        group = groups.groups[body.group_id] = ConsumerGroup(body.group_id)
        if classic is not None:  # an empty classic group's offsets carry over
            group.offsets.update(classic.offsets)
            del world.groups.groups[body.group_id]
    return groups.heartbeat(group, body, world.state, req.now_ms)


HANDLERS: dict[int, tuple[Handler, int, int]] = {
    8: (offset_commit, 2, 9),
    9: (offset_fetch, 1, 9),
    10: (find_coordinator, 0, 6),
    11: (join_group, 0, 9),
    12: (heartbeat, 0, 4),
    13: (leave_group, 0, 5),
    14: (sync_group, 0, 5),
    15: (describe_groups, 0, 5),
    16: (list_groups, 0, 5),
    42: (delete_groups, 0, 2),
    68: (consumer_group_heartbeat, 0, 1),
}
