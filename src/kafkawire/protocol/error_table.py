"""Every error code a Kafka broker can put in a response, as one table of data.

Names are Apache Kafka's current ones (``Errors`` in the Java client); ``retriable`` is true exactly
when Kafka's exception for the code is a ``RetriableException`` (``InvalidMetadataException``
included): the same request may succeed if sent again, usually after refreshing metadata or
finding the coordinator again. Codes this table does not know (a newer broker) are not an error
here: `error_for` synthesizes a non-retriable entry for them, as Kafka's own clients do.

Other clients spell a few codes differently (librdkafka abbreviates, kafka-python kept pre-rename
names); `ALIASES` maps those spellings to codes so they can be looked up, but the table holds one
name per code.

``description`` is the text ``KafkaError.str()`` gives: librdkafka's (``rd_kafka_err2str``, what
confluent-kafka shows, applications log and sometimes match) for every code librdkafka has; the few
KRaft-internal codes librdkafka 2.16 lacks (98, 99, 101, 102, 104..109, never sent to a client) keep
a description of kafkawire's in the same "Broker: " form. tests/unit/protocol/test_error_texts.py holds the
table against the installed librdkafka.
"""

from __future__ import annotations


class ErrorCode:
    """(A plain class: the dataclass cost about a millisecond of every client's start-up to create.)"""

    __slots__ = ("code", "description", "name", "retriable")

    def __init__(self, code: int, name: str, retriable: bool, description: str) -> None:
        self.code = code
        self.name = name
        self.retriable = retriable
        self.description = description

    def __repr__(self) -> str:
        return f"ErrorCode({self.code}, {self.name!r})"


R, F = True, False  # retriable or not

# fmt: off
ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode(-1, "UNKNOWN_SERVER_ERROR", F, "Unknown broker error"),
    ErrorCode(0, "NONE", F, "Success"),
    ErrorCode(1, "OFFSET_OUT_OF_RANGE", F, "Broker: Offset out of range"),
    ErrorCode(2, "CORRUPT_MESSAGE", R, "Broker: Invalid message"),
    ErrorCode(3, "UNKNOWN_TOPIC_OR_PARTITION", R, "Broker: Unknown topic or partition"),
    ErrorCode(4, "INVALID_FETCH_SIZE", F, "Broker: Invalid message size"),
    ErrorCode(5, "LEADER_NOT_AVAILABLE", R, "Broker: Leader not available"),
    ErrorCode(6, "NOT_LEADER_OR_FOLLOWER", R, "Broker: Not leader for partition"),
    ErrorCode(7, "REQUEST_TIMED_OUT", R, "Broker: Request timed out"),
    ErrorCode(8, "BROKER_NOT_AVAILABLE", F, "Broker: Broker not available"),
    ErrorCode(9, "REPLICA_NOT_AVAILABLE", R, "Broker: Replica not available"),
    ErrorCode(10, "MESSAGE_TOO_LARGE", F, "Broker: Message size too large"),
    ErrorCode(11, "STALE_CONTROLLER_EPOCH", F, "Broker: StaleControllerEpochCode"),
    ErrorCode(12, "OFFSET_METADATA_TOO_LARGE", F, "Broker: Offset metadata string too large"),
    ErrorCode(13, "NETWORK_EXCEPTION", R, "Broker: Broker disconnected before response received"),
    ErrorCode(14, "COORDINATOR_LOAD_IN_PROGRESS", R, "Broker: Coordinator load in progress"),
    ErrorCode(15, "COORDINATOR_NOT_AVAILABLE", R, "Broker: Coordinator not available"),
    ErrorCode(16, "NOT_COORDINATOR", R, "Broker: Not coordinator"),
    ErrorCode(17, "INVALID_TOPIC_EXCEPTION", F, "Broker: Invalid topic"),
    ErrorCode(18, "RECORD_LIST_TOO_LARGE", F, "Broker: Message batch larger than configured server segment size"),
    ErrorCode(19, "NOT_ENOUGH_REPLICAS", R, "Broker: Not enough in-sync replicas"),
    ErrorCode(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", R, "Broker: Message(s) written to insufficient number of in-sync replicas"),
    ErrorCode(21, "INVALID_REQUIRED_ACKS", F, "Broker: Invalid required acks value"),
    ErrorCode(22, "ILLEGAL_GENERATION", F, "Broker: Specified group generation id is not valid"),
    ErrorCode(23, "INCONSISTENT_GROUP_PROTOCOL", F, "Broker: Inconsistent group protocol"),
    ErrorCode(24, "INVALID_GROUP_ID", F, "Broker: Invalid group.id"),
    ErrorCode(25, "UNKNOWN_MEMBER_ID", F, "Broker: Unknown member"),
    ErrorCode(26, "INVALID_SESSION_TIMEOUT", F, "Broker: Invalid session timeout"),
    ErrorCode(27, "REBALANCE_IN_PROGRESS", F, "Broker: Group rebalance in progress"),
    ErrorCode(28, "INVALID_COMMIT_OFFSET_SIZE", F, "Broker: Commit offset data size is not valid"),
    ErrorCode(29, "TOPIC_AUTHORIZATION_FAILED", F, "Broker: Topic authorization failed"),
    ErrorCode(30, "GROUP_AUTHORIZATION_FAILED", F, "Broker: Group authorization failed"),
    ErrorCode(31, "CLUSTER_AUTHORIZATION_FAILED", F, "Broker: Cluster authorization failed"),
    ErrorCode(32, "INVALID_TIMESTAMP", F, "Broker: Invalid timestamp"),
    ErrorCode(33, "UNSUPPORTED_SASL_MECHANISM", F, "Broker: Unsupported SASL mechanism"),
    ErrorCode(34, "ILLEGAL_SASL_STATE", F, "Broker: Request not valid in current SASL state"),
    ErrorCode(35, "UNSUPPORTED_VERSION", F, "Broker: API version not supported"),
    ErrorCode(36, "TOPIC_ALREADY_EXISTS", F, "Broker: Topic already exists"),
    ErrorCode(37, "INVALID_PARTITIONS", F, "Broker: Invalid number of partitions"),
    ErrorCode(38, "INVALID_REPLICATION_FACTOR", F, "Broker: Invalid replication factor"),
    ErrorCode(39, "INVALID_REPLICA_ASSIGNMENT", F, "Broker: Invalid replica assignment"),
    ErrorCode(40, "INVALID_CONFIG", F, "Broker: Configuration is invalid"),
    ErrorCode(41, "NOT_CONTROLLER", R, "Broker: Not controller for cluster"),
    ErrorCode(42, "INVALID_REQUEST", F, "Broker: Invalid request"),
    ErrorCode(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", F, "Broker: Message format on broker does not support request"),
    ErrorCode(44, "POLICY_VIOLATION", F, "Broker: Policy violation"),
    ErrorCode(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", F, "Broker: Broker received an out of order sequence number"),
    ErrorCode(46, "DUPLICATE_SEQUENCE_NUMBER", F, "Broker: Broker received a duplicate sequence number"),
    ErrorCode(47, "INVALID_PRODUCER_EPOCH", F, "Broker: Producer attempted an operation with an old epoch"),
    ErrorCode(48, "INVALID_TXN_STATE", F, "Broker: Producer attempted a transactional operation in an invalid state"),
    ErrorCode(49, "INVALID_PRODUCER_ID_MAPPING", F, "Broker: Producer attempted to use a producer id which is not currently assigned to its transactional id"),
    ErrorCode(50, "INVALID_TRANSACTION_TIMEOUT", F, "Broker: Transaction timeout is larger than the maximum value allowed by the broker's max.transaction.timeout.ms"),
    ErrorCode(51, "CONCURRENT_TRANSACTIONS", R, "Broker: Producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing"),
    ErrorCode(52, "TRANSACTION_COORDINATOR_FENCED", F, "Broker: Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer"),
    ErrorCode(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", F, "Broker: Transactional Id authorization failed"),
    ErrorCode(54, "SECURITY_DISABLED", F, "Broker: Security features are disabled"),
    ErrorCode(55, "OPERATION_NOT_ATTEMPTED", F, "Broker: Operation not attempted"),
    ErrorCode(56, "KAFKA_STORAGE_ERROR", R, "Broker: Disk error when trying to access log file on disk"),
    ErrorCode(57, "LOG_DIR_NOT_FOUND", F, "Broker: The user-specified log directory is not found in the broker config"),
    ErrorCode(58, "SASL_AUTHENTICATION_FAILED", F, "Broker: SASL Authentication failed"),
    ErrorCode(59, "UNKNOWN_PRODUCER_ID", F, "Broker: Unknown Producer Id"),
    ErrorCode(60, "REASSIGNMENT_IN_PROGRESS", F, "Broker: Partition reassignment is in progress"),
    ErrorCode(61, "DELEGATION_TOKEN_AUTH_DISABLED", F, "Broker: Delegation Token feature is not enabled"),
    ErrorCode(62, "DELEGATION_TOKEN_NOT_FOUND", F, "Broker: Delegation Token is not found on server"),
    ErrorCode(63, "DELEGATION_TOKEN_OWNER_MISMATCH", F, "Broker: Specified Principal is not valid Owner/Renewer"),
    ErrorCode(64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", F, "Broker: Delegation Token requests are not allowed on this connection"),
    ErrorCode(65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", F, "Broker: Delegation Token authorization failed"),
    ErrorCode(66, "DELEGATION_TOKEN_EXPIRED", F, "Broker: Delegation Token is expired"),
    ErrorCode(67, "INVALID_PRINCIPAL_TYPE", F, "Broker: Supplied principalType is not supported"),
    ErrorCode(68, "NON_EMPTY_GROUP", F, "Broker: The group is not empty"),
    ErrorCode(69, "GROUP_ID_NOT_FOUND", F, "Broker: The group id does not exist"),
    ErrorCode(70, "FETCH_SESSION_ID_NOT_FOUND", R, "Broker: The fetch session ID was not found"),
    ErrorCode(71, "INVALID_FETCH_SESSION_EPOCH", R, "Broker: The fetch session epoch is invalid"),
    ErrorCode(72, "LISTENER_NOT_FOUND", R, "Broker: No matching listener"),
    ErrorCode(73, "TOPIC_DELETION_DISABLED", F, "Broker: Topic deletion is disabled"),
    ErrorCode(74, "FENCED_LEADER_EPOCH", R, "Broker: Leader epoch is older than broker epoch"),
    ErrorCode(75, "UNKNOWN_LEADER_EPOCH", R, "Broker: Leader epoch is newer than broker epoch"),
    ErrorCode(76, "UNSUPPORTED_COMPRESSION_TYPE", F, "Broker: Unsupported compression type"),
    ErrorCode(77, "STALE_BROKER_EPOCH", F, "Broker: Broker epoch has changed"),
    ErrorCode(78, "OFFSET_NOT_AVAILABLE", R, "Broker: Leader high watermark is not caught up"),
    ErrorCode(79, "MEMBER_ID_REQUIRED", F, "Broker: Group member needs a valid member ID"),
    ErrorCode(80, "PREFERRED_LEADER_NOT_AVAILABLE", R, "Broker: Preferred leader was not available"),
    ErrorCode(81, "GROUP_MAX_SIZE_REACHED", F, "Broker: Consumer group has reached maximum size"),
    ErrorCode(82, "FENCED_INSTANCE_ID", F, "Broker: Static consumer fenced by other consumer with same group.instance.id"),
    ErrorCode(83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", R, "Broker: Eligible partition leaders are not available"),
    ErrorCode(84, "ELECTION_NOT_NEEDED", R, "Broker: Leader election not needed for topic partition"),
    ErrorCode(85, "NO_REASSIGNMENT_IN_PROGRESS", F, "Broker: No partition reassignment is in progress"),
    ErrorCode(86, "GROUP_SUBSCRIBED_TO_TOPIC", F, "Broker: Deleting offsets of a topic while the consumer group is subscribed to it"),
    ErrorCode(87, "INVALID_RECORD", F, "Broker: Broker failed to validate record"),
    ErrorCode(88, "UNSTABLE_OFFSET_COMMIT", R, "Broker: There are unstable offsets that need to be cleared"),
    ErrorCode(89, "THROTTLING_QUOTA_EXCEEDED", R, "Broker: Throttling quota has been exceeded"),
    ErrorCode(90, "PRODUCER_FENCED", F, "Broker: There is a newer producer with the same transactionalId which fences the current one"),
    ErrorCode(91, "RESOURCE_NOT_FOUND", F, "Broker: Request illegally referred to resource that does not exist"),
    ErrorCode(92, "DUPLICATE_RESOURCE", F, "Broker: Request illegally referred to the same resource twice"),
    ErrorCode(93, "UNACCEPTABLE_CREDENTIAL", F, "Broker: Requested credential would not meet criteria for acceptability"),
    ErrorCode(94, "INCONSISTENT_VOTER_SET", F, "Broker: Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters"),
    ErrorCode(95, "INVALID_UPDATE_VERSION", F, "Broker: Invalid update version"),
    ErrorCode(96, "FEATURE_UPDATE_FAILED", F, "Broker: Unable to update finalized features due to server error"),
    ErrorCode(97, "PRINCIPAL_DESERIALIZATION_FAILURE", F, "Broker: Request principal deserialization failed during forwarding"),
    ErrorCode(98, "SNAPSHOT_NOT_FOUND", F, "Broker: The requested snapshot does not exist."),
    ErrorCode(99, "POSITION_OUT_OF_RANGE", F, "Broker: The position is outside the snapshot."),
    ErrorCode(100, "UNKNOWN_TOPIC_ID", R, "Broker: Unknown topic id"),
    ErrorCode(101, "DUPLICATE_BROKER_REGISTRATION", F, "Broker: This broker id is already registered."),
    ErrorCode(102, "BROKER_ID_NOT_REGISTERED", F, "Broker: This broker id is not registered."),
    ErrorCode(103, "INCONSISTENT_TOPIC_ID", R, "Broker: The log's topic ID did not match the topic ID in the request"),
    ErrorCode(104, "INCONSISTENT_CLUSTER_ID", F, "Broker: The cluster id given does not match the broker's."),
    ErrorCode(105, "TRANSACTIONAL_ID_NOT_FOUND", F, "Broker: The transactional id does not exist."),
    ErrorCode(106, "FETCH_SESSION_TOPIC_ID_ERROR", R, "Broker: The fetch session mixed topic ids inconsistently."),
    ErrorCode(107, "INELIGIBLE_REPLICA", F, "Broker: The proposed ISR contains an ineligible replica."),
    ErrorCode(108, "NEW_LEADER_ELECTED", F, "Broker: The partition state was updated but the leader has changed."),
    ErrorCode(109, "OFFSET_MOVED_TO_TIERED_STORAGE", F, "Broker: The offset is only in tiered (remote) storage."),
    ErrorCode(110, "FENCED_MEMBER_EPOCH", F, "Broker: The member epoch is fenced by the group coordinator"),
    ErrorCode(111, "UNRELEASED_INSTANCE_ID", F, "Broker: The instance ID is still used by another member in the consumer group"),
    ErrorCode(112, "UNSUPPORTED_ASSIGNOR", F, "Broker: The assignor or its version range is not supported by the consumer group"),
    ErrorCode(113, "STALE_MEMBER_EPOCH", F, "Broker: The member epoch is stale"),
    ErrorCode(114, "MISMATCHED_ENDPOINT_TYPE", F, "Broker: The request was sent to an endpoint of the wrong type"),
    ErrorCode(115, "UNSUPPORTED_ENDPOINT_TYPE", F, "Broker: This endpoint type is not supported yet"),
    ErrorCode(116, "UNKNOWN_CONTROLLER_ID", F, "Broker: This controller ID is not known"),
    ErrorCode(117, "UNKNOWN_SUBSCRIPTION_ID", F, "Broker: Client sent a push telemetry request with an invalid or outdated subscription ID"),
    ErrorCode(118, "TELEMETRY_TOO_LARGE", F, "Broker: Client sent a push telemetry request larger than the maximum size the broker will accept"),
    ErrorCode(119, "INVALID_REGISTRATION", F, "Broker: The controller has considered the broker registration to be invalid"),
    ErrorCode(120, "TRANSACTION_ABORTABLE", F, "Broker: The server encountered an error with the transaction"),
    ErrorCode(121, "INVALID_RECORD_STATE", F, "Broker: The record state is invalid"),
    ErrorCode(122, "SHARE_SESSION_NOT_FOUND", R, "Broker: The share session was not found"),
    ErrorCode(123, "INVALID_SHARE_SESSION_EPOCH", R, "Broker: The share session epoch is invalid"),
    ErrorCode(124, "FENCED_STATE_EPOCH", F, "Broker: The share-group state epoch did not match"),
    ErrorCode(125, "INVALID_VOTER_KEY", F, "Broker: The voter key doesn't match the receiving replica's key"),
    ErrorCode(126, "DUPLICATE_VOTER", F, "Broker: The voter is already part of the set of voters"),
    ErrorCode(127, "VOTER_NOT_FOUND", F, "Broker: The voter is not part of the set of voters"),
    ErrorCode(128, "INVALID_REGULAR_EXPRESSION", F, "Broker: The regular expression is not valid"),
    ErrorCode(129, "REBOOTSTRAP_REQUIRED", F, "Broker: Client metadata is stale, client should rebootstrap to obtain new metadata"),
    ErrorCode(130, "STREAMS_INVALID_TOPOLOGY", F, "Broker: The supplied topology is invalid"),
    ErrorCode(131, "STREAMS_INVALID_TOPOLOGY_EPOCH", F, "Broker: The supplied topology epoch is invalid"),
    ErrorCode(132, "STREAMS_TOPOLOGY_FENCED", F, "Broker: The supplied topology epoch is outdated"),
    ErrorCode(133, "SHARE_SESSION_LIMIT_REACHED", R, "Broker: The limit of share sessions has been reached"),
)
# fmt: on

BY_CODE: dict[int, ErrorCode] = {e.code: e for e in ERROR_CODES}
BY_NAME: dict[str, ErrorCode] = {e.name: e for e in ERROR_CODES}

# librdkafka's spellings where they differ from Kafka's: confluent-kafka's ``KafkaError.name()``
# answers these, so kafkawire's does too. Code -> name.
LIBRDKAFKA_NAMES: dict[int, str] = {
    -1: "UNKNOWN",
    0: "NO_ERROR",
    2: "INVALID_MSG",
    3: "UNKNOWN_TOPIC_OR_PART",
    4: "INVALID_MSG_SIZE",
    6: "NOT_LEADER_FOR_PARTITION",
    10: "MSG_SIZE_TOO_LARGE",
    11: "STALE_CTRL_EPOCH",
    17: "TOPIC_EXCEPTION",
}

# kafka-python's spellings, names Kafka has since changed. Code -> name.
KAFKA_PYTHON_NAMES: dict[int, str] = {
    -1: "UNKNOWN",
    0: "NO_ERROR",
    6: "NOT_LEADER_FOR_PARTITION",  # Kafka's own name before 2.7 (KIP-392)
    10: "MESSAGE_SIZE_TOO_LARGE",
    17: "INVALID_TOPIC",
    39: "INVALID_REPLICATION_ASSIGNMENT",
}

# Every other spelling, name -> code, for lookups by any client's name.
ALIASES: dict[str, int] = {name: code for code, name in (*LIBRDKAFKA_NAMES.items(), *KAFKA_PYTHON_NAMES.items())}


def error_for(code: int) -> ErrorCode:
    """The table's entry for ``code``; for a code it does not know, a non-retriable stand-in."""
    entry = BY_CODE.get(code)
    if entry is not None:
        return entry
    return ErrorCode(code, "UNKNOWN_ERROR_CODE", False, f"Err-{code}?")  # (librdkafka's text for a code it lacks)


def error_named(name: str) -> ErrorCode | None:
    """Look a code up by Kafka's name or by one of the `ALIASES`; None if neither knows it."""
    entry = BY_NAME.get(name)
    if entry is None and name in ALIASES:
        entry = BY_CODE[ALIASES[name]]
    return entry
