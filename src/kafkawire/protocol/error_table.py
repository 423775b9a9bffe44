"""Every error code a Kafka broker can put in a response, as one table of data.

Names are Apache Kafka's current ones (``Errors`` in the Java client); ``retriable`` is true exactly
when Kafka's exception for the code is a ``RetriableException`` (``InvalidMetadataException``
included): the same request may succeed if sent again, usually after refreshing metadata or
finding the coordinator again. Codes this table does not know (a newer broker) are not an error
here: `error_for` synthesizes a non-retriable entry for them, as Kafka's own clients do.

Other clients spell a few codes differently (librdkafka abbreviates, kafka-python kept pre-rename
names); `ALIASES` maps those spellings to codes so they can be looked up, but the table holds one
name per code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorCode:
    code: int
    name: str
    retriable: bool
    description: str


R, F = True, False  # retriable or not

# fmt: off
ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode(-1, "UNKNOWN_SERVER_ERROR", F, "The broker failed in a way it could not classify; see its log."),
    ErrorCode(0, "NONE", F, "Success."),
    ErrorCode(1, "OFFSET_OUT_OF_RANGE", F, "The offset is outside the range the partition currently holds."),
    ErrorCode(2, "CORRUPT_MESSAGE", R, "A record failed its CRC or size check, or a compacted topic got a null key."),
    ErrorCode(3, "UNKNOWN_TOPIC_OR_PARTITION", R, "This broker hosts no such topic-partition (maybe not yet)."),
    ErrorCode(4, "INVALID_FETCH_SIZE", F, "The fetch size requested is not acceptable."),
    ErrorCode(5, "LEADER_NOT_AVAILABLE", R, "The partition has no leader right now; an election is under way."),
    ErrorCode(6, "NOT_LEADER_OR_FOLLOWER", R, "This broker is not the leader (or not a replica) of the partition."),
    ErrorCode(7, "REQUEST_TIMED_OUT", R, "The broker gave up waiting, e.g. for replication to the required acks."),
    ErrorCode(8, "BROKER_NOT_AVAILABLE", F, "The broker is not available."),
    ErrorCode(9, "REPLICA_NOT_AVAILABLE", R, "A replica of the partition is not available."),
    ErrorCode(10, "MESSAGE_TOO_LARGE", F, "A record or batch exceeds the largest size the broker or topic accepts."),
    ErrorCode(11, "STALE_CONTROLLER_EPOCH", F, "The request came from a controller that has since been replaced."),
    ErrorCode(12, "OFFSET_METADATA_TOO_LARGE", F, "The metadata string of a committed offset is too long."),
    ErrorCode(13, "NETWORK_EXCEPTION", R, "The connection dropped before a response arrived."),
    ErrorCode(14, "COORDINATOR_LOAD_IN_PROGRESS", R, "The coordinator is still loading its state."),
    ErrorCode(15, "COORDINATOR_NOT_AVAILABLE", R, "No coordinator is available for the group or transactional id."),
    ErrorCode(16, "NOT_COORDINATOR", R, "This broker is not the coordinator for the group or transactional id."),
    ErrorCode(17, "INVALID_TOPIC_EXCEPTION", F, "The topic name is invalid or the topic cannot take this operation."),
    ErrorCode(18, "RECORD_LIST_TOO_LARGE", F, "A record batch is larger than the log segment size."),
    ErrorCode(19, "NOT_ENOUGH_REPLICAS", R, "Fewer in-sync replicas than min.insync.replicas; nothing was written."),
    ErrorCode(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", R, "Written, but to fewer in-sync replicas than required."),
    ErrorCode(21, "INVALID_REQUIRED_ACKS", F, "The acks value of a produce request is invalid."),
    ErrorCode(22, "ILLEGAL_GENERATION", F, "The group generation given is not the current one."),
    ErrorCode(23, "INCONSISTENT_GROUP_PROTOCOL", F, "The member's protocols are empty or share none with the group's."),
    ErrorCode(24, "INVALID_GROUP_ID", F, "The group id is invalid (empty or null)."),
    ErrorCode(25, "UNKNOWN_MEMBER_ID", F, "The coordinator does not know this member id."),
    ErrorCode(26, "INVALID_SESSION_TIMEOUT", F, "The session timeout is outside the range the broker allows."),
    ErrorCode(27, "REBALANCE_IN_PROGRESS", F, "The group is rebalancing; the member has to rejoin."),
    ErrorCode(28, "INVALID_COMMIT_OFFSET_SIZE", F, "The offset commit is too large."),
    ErrorCode(29, "TOPIC_AUTHORIZATION_FAILED", F, "Not authorized for the topic."),
    ErrorCode(30, "GROUP_AUTHORIZATION_FAILED", F, "Not authorized for the group."),
    ErrorCode(31, "CLUSTER_AUTHORIZATION_FAILED", F, "Not authorized for this cluster-level operation."),
    ErrorCode(32, "INVALID_TIMESTAMP", F, "A record timestamp is outside the accepted range."),
    ErrorCode(33, "UNSUPPORTED_SASL_MECHANISM", F, "The broker does not offer the requested SASL mechanism."),
    ErrorCode(34, "ILLEGAL_SASL_STATE", F, "The request is not allowed at this point of the SASL exchange."),
    ErrorCode(35, "UNSUPPORTED_VERSION", F, "The broker does not support this API version."),
    ErrorCode(36, "TOPIC_ALREADY_EXISTS", F, "A topic with this name exists already."),
    ErrorCode(37, "INVALID_PARTITIONS", F, "The partition count is invalid."),
    ErrorCode(38, "INVALID_REPLICATION_FACTOR", F, "The replication factor is below 1 or above the broker count."),
    ErrorCode(39, "INVALID_REPLICA_ASSIGNMENT", F, "The replica assignment is invalid."),
    ErrorCode(40, "INVALID_CONFIG", F, "A configuration entry is invalid."),
    ErrorCode(41, "NOT_CONTROLLER", R, "This broker is not the active controller."),
    ErrorCode(42, "INVALID_REQUEST", F, "The request is malformed or not valid for this broker; see its log."),
    ErrorCode(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", F, "The topic's message format is too old for this request."),
    ErrorCode(44, "POLICY_VIOLATION", F, "The request breaks a policy configured on the broker."),
    ErrorCode(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", F, "A batch's sequence number skips ahead of the expected one."),
    ErrorCode(46, "DUPLICATE_SEQUENCE_NUMBER", F, "A batch's sequence number was already written."),
    ErrorCode(47, "INVALID_PRODUCER_EPOCH", F, "The producer epoch is older than the current one."),
    ErrorCode(48, "INVALID_TXN_STATE", F, "The transaction is not in a state that allows this operation."),
    ErrorCode(49, "INVALID_PRODUCER_ID_MAPPING", F, "The producer id is not the one assigned to this transactional id."),
    ErrorCode(50, "INVALID_TRANSACTION_TIMEOUT", F, "The transaction timeout exceeds the broker's maximum."),
    ErrorCode(51, "CONCURRENT_TRANSACTIONS", R, "Another operation on the same transaction is still in progress."),
    ErrorCode(52, "TRANSACTION_COORDINATOR_FENCED", F, "The sending transaction coordinator has been replaced."),
    ErrorCode(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", F, "Not authorized for the transactional id."),
    ErrorCode(54, "SECURITY_DISABLED", F, "Security features are not enabled on the broker."),
    ErrorCode(55, "OPERATION_NOT_ATTEMPTED", F, "Not attempted because another part of the batched request failed."),
    ErrorCode(56, "KAFKA_STORAGE_ERROR", R, "The broker failed to access the log on disk."),
    ErrorCode(57, "LOG_DIR_NOT_FOUND", F, "The log directory named is not configured on the broker."),
    ErrorCode(58, "SASL_AUTHENTICATION_FAILED", F, "SASL authentication failed."),
    ErrorCode(59, "UNKNOWN_PRODUCER_ID", F, "The broker has no state for this producer id (e.g. its records expired)."),
    ErrorCode(60, "REASSIGNMENT_IN_PROGRESS", F, "A partition reassignment is under way."),
    ErrorCode(61, "DELEGATION_TOKEN_AUTH_DISABLED", F, "Delegation tokens are not enabled."),
    ErrorCode(62, "DELEGATION_TOKEN_NOT_FOUND", F, "The delegation token does not exist."),
    ErrorCode(63, "DELEGATION_TOKEN_OWNER_MISMATCH", F, "The principal is neither owner nor renewer of the token."),
    ErrorCode(64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", F, "Token requests need an authenticated, non-token channel."),
    ErrorCode(65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", F, "Not authorized for the delegation token."),
    ErrorCode(66, "DELEGATION_TOKEN_EXPIRED", F, "The delegation token has expired."),
    ErrorCode(67, "INVALID_PRINCIPAL_TYPE", F, "The principal type is not supported."),
    ErrorCode(68, "NON_EMPTY_GROUP", F, "The group still has members."),
    ErrorCode(69, "GROUP_ID_NOT_FOUND", F, "The group does not exist."),
    ErrorCode(70, "FETCH_SESSION_ID_NOT_FOUND", R, "The broker has no fetch session with this id."),
    ErrorCode(71, "INVALID_FETCH_SESSION_EPOCH", R, "The fetch session epoch is not the expected one."),
    ErrorCode(72, "LISTENER_NOT_FOUND", R, "The leader has no listener matching the one this request came in on."),
    ErrorCode(73, "TOPIC_DELETION_DISABLED", F, "Topic deletion is disabled on the broker."),
    ErrorCode(74, "FENCED_LEADER_EPOCH", R, "The leader epoch given is older than the broker's."),
    ErrorCode(75, "UNKNOWN_LEADER_EPOCH", R, "The leader epoch given is newer than the broker's."),
    ErrorCode(76, "UNSUPPORTED_COMPRESSION_TYPE", F, "The client cannot read the partition's compression type."),
    ErrorCode(77, "STALE_BROKER_EPOCH", F, "The broker epoch is out of date."),
    ErrorCode(78, "OFFSET_NOT_AVAILABLE", R, "A new leader's high watermark has not caught up yet."),
    ErrorCode(79, "MEMBER_ID_REQUIRED", F, "The member must rejoin with the member id the coordinator gave it."),
    ErrorCode(80, "PREFERRED_LEADER_NOT_AVAILABLE", R, "The preferred leader is not available."),
    ErrorCode(81, "GROUP_MAX_SIZE_REACHED", F, "The group is at its maximum number of members."),
    ErrorCode(82, "FENCED_INSTANCE_ID", F, "Another member registered with the same group.instance.id."),
    ErrorCode(83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", R, "No replica eligible to lead the partition is available."),
    ErrorCode(84, "ELECTION_NOT_NEEDED", R, "The partition already has the leader an election would pick."),
    ErrorCode(85, "NO_REASSIGNMENT_IN_PROGRESS", F, "No partition reassignment is under way."),
    ErrorCode(86, "GROUP_SUBSCRIBED_TO_TOPIC", F, "The group still subscribes to the topic whose offsets are deleted."),
    ErrorCode(87, "INVALID_RECORD", F, "The broker's validation rejected a record."),
    ErrorCode(88, "UNSTABLE_OFFSET_COMMIT", R, "Pending transactional offsets must be resolved first."),
    ErrorCode(89, "THROTTLING_QUOTA_EXCEEDED", R, "The request would exceed a throttling quota (e.g. topic mutations)."),
    ErrorCode(90, "PRODUCER_FENCED", F, "A newer producer with the same transactional id fenced this one."),
    ErrorCode(91, "RESOURCE_NOT_FOUND", F, "The request refers to a resource that does not exist."),
    ErrorCode(92, "DUPLICATE_RESOURCE", F, "The request names the same resource twice."),
    ErrorCode(93, "UNACCEPTABLE_CREDENTIAL", F, "The credential does not meet the broker's requirements."),
    ErrorCode(94, "INCONSISTENT_VOTER_SET", F, "Sender or receiver of a voter request is not an expected voter."),
    ErrorCode(95, "INVALID_UPDATE_VERSION", F, "The update version is invalid."),
    ErrorCode(96, "FEATURE_UPDATE_FAILED", F, "The finalized features could not be updated."),
    ErrorCode(97, "PRINCIPAL_DESERIALIZATION_FAILURE", F, "A forwarded request's principal could not be read."),
    ErrorCode(98, "SNAPSHOT_NOT_FOUND", F, "The requested snapshot does not exist."),
    ErrorCode(99, "POSITION_OUT_OF_RANGE", F, "The position is outside the snapshot."),
    ErrorCode(100, "UNKNOWN_TOPIC_ID", R, "This broker hosts no topic with this id."),
    ErrorCode(101, "DUPLICATE_BROKER_REGISTRATION", F, "This broker id is already registered."),
    ErrorCode(102, "BROKER_ID_NOT_REGISTERED", F, "This broker id is not registered."),
    ErrorCode(103, "INCONSISTENT_TOPIC_ID", R, "The topic id given does not match the log's."),
    ErrorCode(104, "INCONSISTENT_CLUSTER_ID", F, "The cluster id given does not match the broker's."),
    ErrorCode(105, "TRANSACTIONAL_ID_NOT_FOUND", F, "The transactional id does not exist."),
    ErrorCode(106, "FETCH_SESSION_TOPIC_ID_ERROR", R, "The fetch session mixed topic ids inconsistently."),
    ErrorCode(107, "INELIGIBLE_REPLICA", F, "The proposed ISR contains an ineligible replica."),
    ErrorCode(108, "NEW_LEADER_ELECTED", F, "The partition state was updated but the leader has changed."),
    ErrorCode(109, "OFFSET_MOVED_TO_TIERED_STORAGE", F, "The offset is only in tiered (remote) storage."),
    ErrorCode(110, "FENCED_MEMBER_EPOCH", F, "The member epoch is fenced; release all partitions and rejoin."),
    ErrorCode(111, "UNRELEASED_INSTANCE_ID", F, "Another member still holds this instance id; it must leave first."),
    ErrorCode(112, "UNSUPPORTED_ASSIGNOR", F, "The group does not support this assignor or its versions."),
    ErrorCode(113, "STALE_MEMBER_EPOCH", F, "The member epoch is stale; retry after the next heartbeat."),
    ErrorCode(114, "MISMATCHED_ENDPOINT_TYPE", F, "The request reached an endpoint of the wrong type."),
    ErrorCode(115, "UNSUPPORTED_ENDPOINT_TYPE", F, "This endpoint type is not supported."),
    ErrorCode(116, "UNKNOWN_CONTROLLER_ID", F, "This controller id is not known."),
    ErrorCode(117, "UNKNOWN_SUBSCRIPTION_ID", F, "The telemetry subscription id is unknown or outdated."),
    ErrorCode(118, "TELEMETRY_TOO_LARGE", F, "The pushed telemetry exceeds the broker's limit."),
    ErrorCode(119, "INVALID_REGISTRATION", F, "The controller considers the broker registration invalid."),
    ErrorCode(120, "TRANSACTION_ABORTABLE", F, "The transaction failed; abort it to keep using the transactional id."),
    ErrorCode(121, "INVALID_RECORD_STATE", F, "The record's state does not allow the acknowledgement."),
    ErrorCode(122, "SHARE_SESSION_NOT_FOUND", R, "The broker has no such share session."),
    ErrorCode(123, "INVALID_SHARE_SESSION_EPOCH", R, "The share session epoch is not the expected one."),
    ErrorCode(124, "FENCED_STATE_EPOCH", F, "The share-group state epoch does not match."),
    ErrorCode(125, "INVALID_VOTER_KEY", F, "The voter key does not match the receiving replica."),
    ErrorCode(126, "DUPLICATE_VOTER", F, "The voter is already in the voter set."),
    ErrorCode(127, "VOTER_NOT_FOUND", F, "The voter is not in the voter set."),
    ErrorCode(128, "INVALID_REGULAR_EXPRESSION", F, "The subscription's regular expression is invalid."),
    ErrorCode(129, "REBOOTSTRAP_REQUIRED", F, "Client metadata is too stale; start again from the bootstrap servers."),
    ErrorCode(130, "STREAMS_INVALID_TOPOLOGY", F, "The Streams topology is invalid."),
    ErrorCode(131, "STREAMS_INVALID_TOPOLOGY_EPOCH", F, "The Streams topology epoch is invalid."),
    ErrorCode(132, "STREAMS_TOPOLOGY_FENCED", F, "The Streams topology epoch is outdated."),
    ErrorCode(133, "SHARE_SESSION_LIMIT_REACHED", R, "The broker has reached its limit of share sessions."),
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
    return ErrorCode(code, "UNKNOWN_ERROR_CODE", False, f"Code {code} is not in kafkawire's table (a newer broker?).")


def error_named(name: str) -> ErrorCode | None:
    """Look a code up by Kafka's name or by one of the `ALIASES`; None if neither knows it."""
    entry = BY_NAME.get(name)
    if entry is None and name in ALIASES:
        entry = BY_CODE[ALIASES[name]]
    return entry
