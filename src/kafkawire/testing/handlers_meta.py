"""Metadata and the admin APIs on topics and configs: what a broker answers, from the cluster state."""

from __future__ import annotations

from typing import Any

from kafkawire.protocol import error_codes as E
from kafkawire.protocol.schema import ZERO_UUID

from .state import CLUSTER_ID, Topic, topic_name_error
from .world import Handler, Request, World

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
DEFAULT_TOPIC_CONFIGS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "max.message.bytes": "1048588",
    "min.insync.replicas": "1",
    "retention.ms": "604800000",
    "segment.bytes": "1073741824",
}
DEFAULT_CONFIG_SOURCE = 5
DYNAMIC_TOPIC_CONFIG_SOURCE = 1


def metadata(world: World, req: Request) -> dict[str, Any]:
    state = world.state
    body = req.body
    wanted = body.topics
    if wanted is None or (req.version == 0 and not wanted):
        topics = list(state.topics.values())
        names: list[tuple[str | None, Any]] = [(t.name, t.topic_id) for t in topics]
    else:
        names = [(t.name, t.topic_id) for t in wanted]
    allow = body.allow_auto_topic_creation if req.version >= 4 else True
    out = []
    for name, topic_id in names:
        topic = state.topic(name, topic_id, create=allow)
        if topic is None:
            error = topic_name_error(name) if name else E.UNKNOWN_TOPIC_ID
            out.append(
                {"error_code": error or E.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "topic_id": topic_id or ZERO_UUID}
            )
            continue
        out.append(describe_topic(topic))
    return {
        "brokers": [{"node_id": b.node_id, "host": b.host, "port": b.port} for b in state.brokers.values()],
        "cluster_id": CLUSTER_ID,
        "controller_id": state.controller_id,
        "topics": out,
    }


def describe_topic(topic: Topic) -> dict[str, Any]:
    return {
        "error_code": E.NONE,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "partitions": [
            {
                "error_code": E.NONE if p.leader != -1 else E.LEADER_NOT_AVAILABLE,
                "partition_index": p.index,
                "leader_id": p.leader,
                "leader_epoch": p.log.leader_epoch,
                "replica_nodes": p.replicas,
                "isr_nodes": p.replicas,
            }
            for p in topic.partitions
        ],
    }


def create_topics(world: World, req: Request) -> dict[str, Any]:
    out = []
    for t in req.body.topics:
        partitions = t.num_partitions if t.num_partitions > 0 else world.state.default_partitions
        replication = t.replication_factor if t.replication_factor > 0 else min(3, len(world.state.brokers))
        if req.body.validate_only:
            error = topic_name_error(t.name) or (E.TOPIC_ALREADY_EXISTS if t.name in world.state.topics else E.NONE)
        else:
            error = world.state.create_topic(t.name, partitions, replication)
        entry: dict[str, Any] = {"name": t.name, "error_code": error}
        if error == E.NONE:
            if not req.body.validate_only:
                topic = world.state.topics[t.name]
                topic.configs.update({c.name: c.value for c in t.configs if c.value is not None})
                entry["topic_id"] = topic.topic_id
            entry.update(num_partitions=partitions, replication_factor=replication)
        else:
            entry["error_message"] = f"topic {t.name!r}: error {error}"
        out.append(entry)
    return {"topics": out}


def delete_topics(world: World, req: Request) -> dict[str, Any]:
    wanted = [(n, None) for n in req.body.topic_names] + [(t.name, t.topic_id) for t in req.body.topics]
    out = []
    for name, topic_id in wanted:
        topic = world.state.topic(name, topic_id)
        error = world.state.delete_topic(topic.name) if topic is not None else E.UNKNOWN_TOPIC_OR_PARTITION
        out.append(
            {
                "name": name if name is not None else (topic.name if topic else None),
                "topic_id": topic_id or ZERO_UUID,
                "error_code": error,
            }
        )
    return {"responses": out}


def create_partitions(world: World, req: Request) -> dict[str, Any]:
    out = []
    for t in req.body.topics:
        topic = world.state.topic(t.name)
        if topic is None:
            error = E.UNKNOWN_TOPIC_OR_PARTITION
        elif t.count <= len(topic.partitions):
            error = E.INVALID_PARTITIONS
        else:
            error = E.NONE
            if not req.body.validate_only:
                world.state.add_partitions(topic, t.count)
        out.append({"name": t.name, "error_code": error})
    return {"results": out}


def describe_configs(world: World, req: Request) -> dict[str, Any]:
    results = []
    for r in req.body.resources:
        entry: dict[str, Any] = {
            "resource_type": r.resource_type,
            "resource_name": r.resource_name,
            "error_code": E.NONE,
        }
        if r.resource_type == TOPIC_RESOURCE:
            topic = world.state.topic(r.resource_name)
            if topic is None:
                entry["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION
                results.append(entry)
                continue
            configs = {**DEFAULT_TOPIC_CONFIGS, **topic.configs}
            sources = {k: DYNAMIC_TOPIC_CONFIG_SOURCE if k in topic.configs else DEFAULT_CONFIG_SOURCE for k in configs}
        elif r.resource_type == BROKER_RESOURCE:
            configs = {"broker.id": r.resource_name, "num.partitions": str(world.state.default_partitions)}
            sources = dict.fromkeys(configs, DEFAULT_CONFIG_SOURCE)
        else:
            entry["error_code"] = E.INVALID_REQUEST
            results.append(entry)
            continue
        keys = r.configuration_keys if r.configuration_keys is not None else sorted(configs)
        entry["configs"] = [
            {
                "name": k,
                "value": configs[k],
                "read_only": False,
                "config_source": sources[k],
            }
            for k in keys
            if k in configs
        ]
        results.append(entry)
    return {"results": results}


def _set(configs: dict[str, str], name: str, value: str | None) -> None:
    configs[name] = value or ""


def _delete(configs: dict[str, str], name: str, value: str | None) -> None:
    configs.pop(name, None)


def _append(configs: dict[str, str], name: str, value: str | None) -> None:
    items = [i for i in configs.get(name, "").split(",") if i]
    configs[name] = ",".join(items + [v for v in (value or "").split(",") if v and v not in items])


def _subtract(configs: dict[str, str], name: str, value: str | None) -> None:
    gone = set((value or "").split(","))
    configs[name] = ",".join(i for i in configs.get(name, "").split(",") if i and i not in gone)


CONFIG_OPERATIONS = {0: _set, 1: _delete, 2: _append, 3: _subtract}  # IncrementalAlterConfigs' op codes
INCREMENTAL_ALTER_CONFIGS_KEY = 44


def alter_configs(world: World, req: Request) -> dict[str, Any]:
    """AlterConfigs (the whole dynamic set replaced) and IncrementalAlterConfigs (key by key), on topics."""
    incremental = req.api.key == INCREMENTAL_ALTER_CONFIGS_KEY
    out = []
    for r in req.body.resources:
        entry: dict[str, Any] = {
            "resource_type": r.resource_type,
            "resource_name": r.resource_name,
            "error_code": E.NONE,
        }
        topic = world.state.topic(r.resource_name) if r.resource_type == TOPIC_RESOURCE else None
        operations = [CONFIG_OPERATIONS.get(c.config_operation if incremental else 0) for c in r.configs]
        if r.resource_type != TOPIC_RESOURCE:
            entry.update(error_code=E.INVALID_REQUEST, error_message="the mock cluster changes topic configs only")
        elif topic is None:
            entry["error_code"] = E.UNKNOWN_TOPIC_OR_PARTITION
        elif None in operations:
            entry["error_code"] = E.INVALID_REQUEST
        elif not req.body.validate_only:
            configs = dict(topic.configs) if incremental else {}
            for c, operation in zip(r.configs, operations, strict=True):
                assert operation is not None
                operation(configs, c.name, c.value)
            topic.configs = configs
        out.append(entry)
    return {"responses": out}


def describe_cluster(world: World, req: Request) -> dict[str, Any]:
    state = world.state
    return {
        "cluster_id": CLUSTER_ID,
        "controller_id": state.controller_id,
        "brokers": [{"broker_id": b.node_id, "host": b.host, "port": b.port} for b in state.brokers.values()],
    }


HANDLERS: dict[int, tuple[Handler, int, int]] = {
    3: (metadata, 0, 12),
    19: (create_topics, 2, 7),
    20: (delete_topics, 1, 6),
    32: (describe_configs, 1, 4),
    33: (alter_configs, 0, 2),
    44: (alter_configs, 0, 1),
    37: (create_partitions, 0, 3),
    60: (describe_cluster, 0, 1),
}
