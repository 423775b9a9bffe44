"""Metadata asked for by a caller that waits: a refresh (`Client.refresh_metadata`, list_topics()),
whose request a broker's failure failed over is asked again of another broker, anything else being
the answer; and a member's assignment's topic ids, asked for until the metadata names them."""

from __future__ import annotations

from ...protocol import error_codes as ec
from ..kafka_error import KafkaError
from . import Action, ErrorPolicy

METADATA_REFRESH = ErrorPolicy("metadata refresh", {KafkaError._TRANSPORT: Action.RETRY}, retriable=Action.FAIL)

# A group member's assignment names topics by id: the metadata is asked again, whatever happened
# (a failed request, a topic not named yet), until it names them or a newer assignment comes.
TOPIC_NAMES = ErrorPolicy(
    "topic names", {ec.UNKNOWN_TOPIC_ID: Action.RETRY}, retriable=Action.RETRY, local=Action.RETRY, final=Action.RETRY
)
