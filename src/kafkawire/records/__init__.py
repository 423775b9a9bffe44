"""Kafka's on-the-wire record formats: RecordBatch v2, legacy MessageSets, codecs, CRCs."""

from kafkawire.protocol.primitives import DecodeError
from kafkawire.records.batch import (
    HEADER_GAP,
    WIDEST_GAP,
    BatchBuilder,
    build_control_batch,
    record_size_upper_bound,
    record_size_widest,
    with_producer_state,
)
from kafkawire.records.compression import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    DecompressedSizeError,
    compress,
    decompress,
)
from kafkawire.records.crc import crc32, crc32c
from kafkawire.records.decoder import decode_batches, decode_transaction_marker
from kafkawire.records.legacy import encode_message_set
from kafkawire.records.types import (
    CONTROL_ABORT,
    CONTROL_COMMIT,
    CREATE_TIME,
    DEFAULT_DECODE_BUDGET,
    HEADER_SIZE,
    LOG_APPEND_TIME,
    CorruptRecordError,
    DecodeBudget,
    DecodeBudgetError,
    Record,
    RecordBatch,
    TransactionMarker,
)

__all__ = [
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "CREATE_TIME",
    "DEFAULT_DECODE_BUDGET",
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "GZIP",
    "HEADER_GAP",
    "HEADER_SIZE",
    "LOG_APPEND_TIME",
    "LZ4",
    "NONE",
    "SNAPPY",
    "WIDEST_GAP",
    "ZSTD",
    "BatchBuilder",
    "CorruptRecordError",
    "DecodeBudget",
    "DecodeBudgetError",
    "DecodeError",
    "DecompressedSizeError",
    "Record",
    "RecordBatch",
    "TransactionMarker",
    "build_control_batch",
    "compress",
    "crc32",
    "crc32c",
    "decode_batches",
    "decode_transaction_marker",
    "decompress",
    "encode_message_set",
    "record_size_upper_bound",
    "record_size_widest",
    "with_producer_state",
]
