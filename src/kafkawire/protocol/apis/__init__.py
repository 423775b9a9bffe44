"""Every API kafkawire speaks, one module each, collected here by key and by name."""

from ..schema import Api
from .api_versions import API_VERSIONS
from .produce import PRODUCE

# group A imports (producer, transactions, fetch, SASL)
# isort: split
from .add_offsets_to_txn import ADD_OFFSETS_TO_TXN
from .add_partitions_to_txn import ADD_PARTITIONS_TO_TXN
from .end_txn import END_TXN
from .fetch import FETCH
from .find_coordinator import FIND_COORDINATOR
from .init_producer_id import INIT_PRODUCER_ID
from .list_offsets import LIST_OFFSETS
from .metadata import METADATA
from .sasl_authenticate import SASL_AUTHENTICATE
from .sasl_handshake import SASL_HANDSHAKE
from .txn_offset_commit import TXN_OFFSET_COMMIT

# isort: split
# group B imports (admin)
from .alter_configs import ALTER_CONFIGS
from .create_partitions import CREATE_PARTITIONS
from .create_topics import CREATE_TOPICS
from .delete_records import DELETE_RECORDS
from .delete_topics import DELETE_TOPICS
from .describe_cluster import DESCRIBE_CLUSTER
from .describe_configs import DESCRIBE_CONFIGS
from .describe_groups import DESCRIBE_GROUPS
from .incremental_alter_configs import INCREMENTAL_ALTER_CONFIGS
from .list_groups import LIST_GROUPS

# isort: split
# group D imports (admin: ACLs, groups, leaders, SCRAM credentials)
from .alter_user_scram_credentials import ALTER_USER_SCRAM_CREDENTIALS
from .consumer_group_describe import CONSUMER_GROUP_DESCRIBE
from .create_acls import CREATE_ACLS
from .delete_acls import DELETE_ACLS
from .delete_groups import DELETE_GROUPS
from .describe_acls import DESCRIBE_ACLS
from .describe_user_scram_credentials import DESCRIBE_USER_SCRAM_CREDENTIALS
from .elect_leaders import ELECT_LEADERS

# isort: split
# group E imports (share groups, KIP-932)
from .share_acknowledge import SHARE_ACKNOWLEDGE
from .share_fetch import SHARE_FETCH
from .share_group_describe import SHARE_GROUP_DESCRIBE
from .share_group_heartbeat import SHARE_GROUP_HEARTBEAT

# isort: split
# group F imports (client metrics, KIP-714)
from .get_telemetry_subscriptions import GET_TELEMETRY_SUBSCRIPTIONS
from .push_telemetry import PUSH_TELEMETRY

# isort: split
# group C imports (consumer groups)
from .consumer_group_heartbeat import CONSUMER_GROUP_HEARTBEAT
from .heartbeat import HEARTBEAT
from .join_group import JOIN_GROUP
from .leave_group import LEAVE_GROUP
from .offset_commit import OFFSET_COMMIT
from .offset_fetch import OFFSET_FETCH
from .sync_group import SYNC_GROUP

ALL_APIS: tuple[Api, ...] = (
    PRODUCE,
    API_VERSIONS,
    # group A entries
    FETCH,
    LIST_OFFSETS,
    METADATA,
    FIND_COORDINATOR,
    SASL_HANDSHAKE,
    INIT_PRODUCER_ID,
    ADD_PARTITIONS_TO_TXN,
    ADD_OFFSETS_TO_TXN,
    END_TXN,
    TXN_OFFSET_COMMIT,
    SASL_AUTHENTICATE,
    # group B entries
    LIST_GROUPS,
    DESCRIBE_GROUPS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DELETE_RECORDS,
    DESCRIBE_CONFIGS,
    ALTER_CONFIGS,
    CREATE_PARTITIONS,
    INCREMENTAL_ALTER_CONFIGS,
    DESCRIBE_CLUSTER,
    # group C entries
    OFFSET_COMMIT,
    OFFSET_FETCH,
    JOIN_GROUP,
    HEARTBEAT,
    LEAVE_GROUP,
    SYNC_GROUP,
    CONSUMER_GROUP_HEARTBEAT,
    # group D entries
    DESCRIBE_ACLS,
    CREATE_ACLS,
    DELETE_ACLS,
    DELETE_GROUPS,
    CONSUMER_GROUP_DESCRIBE,
    ELECT_LEADERS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
    ALTER_USER_SCRAM_CREDENTIALS,
    # group E entries
    SHARE_GROUP_HEARTBEAT,
    SHARE_GROUP_DESCRIBE,
    SHARE_FETCH,
    SHARE_ACKNOWLEDGE,
    # group F entries
    GET_TELEMETRY_SUBSCRIPTIONS,
    PUSH_TELEMETRY,
)

API_BY_KEY: dict[int, Api] = {a.key: a for a in ALL_APIS}
API_BY_NAME: dict[str, Api] = {a.name: a for a in ALL_APIS}

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
