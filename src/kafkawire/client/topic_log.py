"""What the ``topic`` debug context says (`kafkawire.base.debug` writes it): how each topic's picture
changed when a Metadata answer was folded in: a topic's state (unknown, exists, notexists, error;
facility TOPIC, as STATE names a broker connection's states here), its partition count (PARTCNT),
each partition's leader and epoch (LEADER).
Called only when the context is on, with the topics before and after the fold.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..base.debug import MAIN, Debug
from ..core.kafka_error import KafkaError
from ..core.metadata import TopicInfo
from ..protocol import error_codes as E

_GONE = (E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID)


def _state(info: TopicInfo | None) -> str:
    if info is None:
        return "unknown"
    if info.error_code in _GONE:
        return "notexists"
    return "error" if info.error_code else "exists"


def changes(debug: Debug, before: Mapping[str, TopicInfo], after: Mapping[str, TopicInfo]) -> None:
    """One line per change: state, partition count, leader (a topic dropped from a full answer
    is ``notexists``)."""
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is new:
            continue
        was, now = _state(old), _state(new)
        if new is None:
            now = "notexists"
        if was != now:
            why = f": {KafkaError(new.error_code).str()}" if new is not None and new.error_code else ""
            debug.log("topic", "TOPIC", MAIN, "Topic %s changed state %s -> %s%s", name, was, now, why)
        if new is None:
            continue
        old_parts = {} if old is None else old.partitions
        if len(old_parts) != len(new.partitions):
            debug.log(
                "topic",
                "PARTCNT",
                MAIN,
                "Topic %s partition count changed from %d to %d",
                name,
                len(old_parts),
                len(new.partitions),
            )
        for index, p in sorted(new.partitions.items()):
            q = old_parts.get(index)
            if q is None or (q.leader, q.leader_epoch) != (p.leader, p.leader_epoch):
                debug.log(
                    "topic",
                    "LEADER",
                    MAIN,
                    "%s [%d]: leader %d epoch %d -> leader %d epoch %d",
                    name,
                    index,
                    -1 if q is None else q.leader,
                    -1 if q is None else q.leader_epoch,
                    p.leader,
                    p.leader_epoch,
                )
