"""Every API kafkawire speaks, one module each, indexed here by key and by name.

An API's module is imported when its constant is first asked for (``from .apis import PRODUCE``):
a producer needs a dozen of the declarations, and building them all cost start-up time for every
program. The indices (`ALL_APIS`, `API_BY_KEY`, `API_BY_NAME`) import them all, on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..schema import Api
    from .add_offsets_to_txn import ADD_OFFSETS_TO_TXN
    from .add_partitions_to_txn import ADD_PARTITIONS_TO_TXN
    from .alter_configs import ALTER_CONFIGS
    from .alter_user_scram_credentials import ALTER_USER_SCRAM_CREDENTIALS
    from .api_versions import API_VERSIONS
    from .consumer_group_describe import CONSUMER_GROUP_DESCRIBE
    from .consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
    from .create_acls import CREATE_ACLS
    from .create_partitions import CREATE_PARTITIONS
    from .create_topics import CREATE_TOPICS
    from .delete_acls import DELETE_ACLS
    from .delete_groups import DELETE_GROUPS
    from .delete_records import DELETE_RECORDS
    from .delete_topics import DELETE_TOPICS
    from .describe_acls import DESCRIBE_ACLS
    from .describe_cluster import DESCRIBE_CLUSTER
    from .describe_configs import DESCRIBE_CONFIGS
    from .describe_groups import DESCRIBE_GROUPS
    from .describe_user_scram_credentials import DESCRIBE_USER_SCRAM_CREDENTIALS
    from .elect_leaders import ELECT_LEADERS
    from .end_txn import END_TXN
    from .fetch import FETCH
    from .find_coordinator import FIND_COORDINATOR
    from .get_telemetry_subscriptions import GET_TELEMETRY_SUBSCRIPTIONS
    from .heartbeat import HEARTBEAT
    from .incremental_alter_configs import INCREMENTAL_ALTER_CONFIGS
    from .init_producer_id import INIT_PRODUCER_ID
    from .join_group import JOIN_GROUP
    from .leave_group import LEAVE_GROUP
    from .list_groups import LIST_GROUPS
    from .list_offsets import LIST_OFFSETS
    from .metadata import METADATA
    from .offset_commit import OFFSET_COMMIT
    from .offset_fetch import OFFSET_FETCH
    from .produce import PRODUCE
    from .push_telemetry import PUSH_TELEMETRY
    from .sasl_authenticate import SASL_AUTHENTICATE
    from .sasl_handshake import SASL_HANDSHAKE
    from .share_acknowledge import SHARE_ACKNOWLEDGE
    from .share_fetch import SHARE_FETCH
    from .share_group_describe import SHARE_GROUP_DESCRIBE
    from .share_group_heartbeat import SHARE_GROUP_HEARTBEAT
    from .sync_group import SYNC_GROUP
    from .txn_offset_commit import TXN_OFFSET_COMMIT

    ALL_APIS: tuple[Api, ...]
    API_BY_KEY: dict[int, Api]
    API_BY_NAME: dict[str, Api]

# Every API's constant, in the order `ALL_APIS` lists them; each lives in the module of its name.
NAMES = (
    "PRODUCE",
    "API_VERSIONS",
    "FETCH",
    "LIST_OFFSETS",
    "METADATA",
    "FIND_COORDINATOR",
    "SASL_HANDSHAKE",
    "INIT_PRODUCER_ID",
    "ADD_PARTITIONS_TO_TXN",
    "ADD_OFFSETS_TO_TXN",
    "END_TXN",
    "TXN_OFFSET_COMMIT",
    "SASL_AUTHENTICATE",
    "LIST_GROUPS",
    "DESCRIBE_GROUPS",
    "CREATE_TOPICS",
    "DELETE_TOPICS",
    "DELETE_RECORDS",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
    "CREATE_PARTITIONS",
    "INCREMENTAL_ALTER_CONFIGS",
    "DESCRIBE_CLUSTER",
    "OFFSET_COMMIT",
    "OFFSET_FETCH",
    "JOIN_GROUP",
    "HEARTBEAT",
    "LEAVE_GROUP",
    "SYNC_GROUP",
    "CONSUMER_GROUP_HEARTBEAT",
    "DESCRIBE_ACLS",
    "CREATE_ACLS",
    "DELETE_ACLS",
    "DELETE_GROUPS",
    "CONSUMER_GROUP_DESCRIBE",
    "ELECT_LEADERS",
    "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "ALTER_USER_SCRAM_CREDENTIALS",
    "SHARE_GROUP_HEARTBEAT",
    "SHARE_GROUP_DESCRIBE",
    "SHARE_FETCH",
    "SHARE_ACKNOWLEDGE",
    "GET_TELEMETRY_SUBSCRIPTIONS",
    "PUSH_TELEMETRY",
)


def __getattr__(name: str) -> Any:
    if name in NAMES:
        value = getattr(importlib.import_module(f".{name.lower()}", __name__), name)
    elif name == "ALL_APIS":
        value = tuple(__getattr__(each) for each in NAMES)
    elif name == "API_BY_KEY":
        value = {api.key: api for api in __getattr__("ALL_APIS")}
    elif name == "API_BY_NAME":
        value = {api.name: api for api in __getattr__("ALL_APIS")}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "ADD_OFFSETS_TO_TXN",
    "ADD_PARTITIONS_TO_TXN",
    "ALL_APIS",
    "ALTER_CONFIGS",
    "ALTER_USER_SCRAM_CREDENTIALS",
    "API_BY_KEY",
    "API_BY_NAME",
    "API_VERSIONS",
    "CONSUMER_GROUP_DESCRIBE",
    "CONSUMER_GROUP_HEARTBEAT",
    "CREATE_ACLS",
    "CREATE_PARTITIONS",
    "CREATE_TOPICS",
    "DELETE_ACLS",
    "DELETE_GROUPS",
    "DELETE_RECORDS",
    "DELETE_TOPICS",
    "DESCRIBE_ACLS",
    "DESCRIBE_CLUSTER",
    "DESCRIBE_CONFIGS",
    "DESCRIBE_GROUPS",
    "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "ELECT_LEADERS",
    "END_TXN",
    "FETCH",
    "FIND_COORDINATOR",
    "GET_TELEMETRY_SUBSCRIPTIONS",
    "HEARTBEAT",
    "INCREMENTAL_ALTER_CONFIGS",
    "INIT_PRODUCER_ID",
    "JOIN_GROUP",
    "LEAVE_GROUP",
    "LIST_GROUPS",
    "LIST_OFFSETS",
    "METADATA",
    "OFFSET_COMMIT",
    "OFFSET_FETCH",
    "PRODUCE",
    "PUSH_TELEMETRY",
    "SASL_AUTHENTICATE",
    "SASL_HANDSHAKE",
    "SHARE_ACKNOWLEDGE",
    "SHARE_FETCH",
    "SHARE_GROUP_DESCRIBE",
    "SHARE_GROUP_HEARTBEAT",
    "SYNC_GROUP",
    "TXN_OFFSET_COMMIT",
]
