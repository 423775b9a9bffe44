"""InitProducerId and the transaction APIs, answered by the transaction coordinator (TxnOffsetCommit
by the group's)."""

from __future__ import annotations

from typing import Any

from kafkawire.protocol import error_codes as E

from .handlers_groups import commit_offsets, coordinator_error
from .mock_transactions import OffsetSink, Transaction
from .state import GROUP, TRANSACTION
from .world import Handler, Request, World


def init_producer_id(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    if body.transactional_id is not None:
        error = coordinator_error(world, req, TRANSACTION, body.transactional_id)
        if error:
            return {"error_code": error}
    error, producer_id, epoch = world.transactions.init_producer(
        body.transactional_id,
        body.transaction_timeout_ms,
        body.producer_id,
        body.producer_epoch,
        world.state,
        req.now_ms,
        _offset_sink(world),
    )
    return {"error_code": error, "producer_id": producer_id, "producer_epoch": epoch}


def _transaction(
    world: World, req: Request, coordinator: tuple[str, str], transactional_id: str, producer_id: int, epoch: int
) -> tuple[int, Transaction | None]:
    """The transaction a request names, if this broker coordinates the request and the producer matches."""
    error = coordinator_error(world, req, *coordinator)
    if error:
        return error, None
    return world.transactions.check(transactional_id, producer_id, epoch)


def _offset_sink(world: World) -> OffsetSink:
    return lambda group_id, offsets: commit_offsets(world, group_id, offsets)


def add_partitions_to_txn(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    txn_id = body.v3_and_below_transactional_id
    error, txn = _transaction(
        world, req, (TRANSACTION, txn_id), txn_id, body.v3_and_below_producer_id, body.v3_and_below_producer_epoch
    )
    results = []
    for t in body.v3_and_below_topics:
        parts = []
        for index in t.partitions:
            code = error
            if not code and world.state.partition(t.name, index) is None:
                code = E.UNKNOWN_TOPIC_OR_PARTITION
            parts.append({"partition_index": index, "partition_error_code": code})
        results.append({"name": t.name, "results_by_partition": parts})
    failed = any(p["partition_error_code"] for r in results for p in r["results_by_partition"])
    if failed:
        for r in results:  # one failure fails the whole request, the rest OPERATION_NOT_ATTEMPTED
            for p in r["results_by_partition"]:
                p["partition_error_code"] = p["partition_error_code"] or E.OPERATION_NOT_ATTEMPTED
    elif txn is not None:
        txn.partitions.update((t.name, index) for t in body.v3_and_below_topics for index in t.partitions)
    return {"results_by_topic_v3_and_below": results}


def add_offsets_to_txn(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    coordinator = (TRANSACTION, body.transactional_id)
    error, txn = _transaction(world, req, coordinator, body.transactional_id, body.producer_id, body.producer_epoch)
    if txn is not None:
        txn.groups.add(body.group_id)
    return {"error_code": error}


def txn_offset_commit(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    coordinator = (GROUP, body.group_id)
    error, txn = _transaction(world, req, coordinator, body.transactional_id, body.producer_id, body.producer_epoch)
    if txn is not None and body.group_id not in txn.groups:
        error = E.INVALID_TXN_STATE
    topics = []
    for t in body.topics:
        parts = []
        for p in t.partitions:
            parts.append({"partition_index": p.partition_index, "error_code": error})
            if not error and txn is not None:
                txn.offsets.setdefault(body.group_id, {})[(t.name, p.partition_index)] = (
                    p.committed_offset,
                    p.committed_metadata,
                    p.committed_leader_epoch,
                )
        topics.append({"name": t.name, "partitions": parts})
    return {"topics": topics}


def end_txn(world: World, req: Request) -> dict[str, Any]:
    body = req.body
    coordinator = (TRANSACTION, body.transactional_id)
    error, txn = _transaction(world, req, coordinator, body.transactional_id, body.producer_id, body.producer_epoch)
    if txn is not None and not txn.ongoing:
        error = E.INVALID_TXN_STATE
    elif txn is not None:
        world.transactions.finish(txn, body.committed, world.state, req.now_ms, _offset_sink(world))
    return {"error_code": error}


HANDLERS: dict[int, tuple[Handler, int, int]] = {
    22: (init_producer_id, 0, 4),
    24: (add_partitions_to_txn, 0, 3),
    25: (add_offsets_to_txn, 0, 3),
    26: (end_txn, 0, 3),
    28: (txn_offset_commit, 0, 3),
}
