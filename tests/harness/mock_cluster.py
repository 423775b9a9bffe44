"""A typed ctypes wrapper over librdkafka's mock cluster.

librdkafka ships an in-process mock Kafka cluster (``rdkafka_mock.h``) whose
brokers listen on loopback sockets and which supports error injection,
per-broker round-trip delays, brokers going down, leader changes, ApiVersion
range overrides and request tracking. It is used here through the librdkafka
shared library bundled in the confluent-kafka wheel, so no compiler and no
extra package is needed.

The mock API is marked experimental by librdkafka (no ABI guarantee); the
signatures below match librdkafka 2.x and every function is declared with its
argument and result types, so a mismatch fails loudly at load time
(``AttributeError`` for a missing symbol) rather than corrupting memory.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kafkawire.protocol.apis import API_BY_KEY

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "MockCluster",
    "MockClusterError",
    "MockRequest",
    "find_librdkafka",
]

_RD_KAFKA_PRODUCER = 0
_RD_KAFKA_CONF_OK = 0
_ERRSTR_SIZE = 512
_LOOPBACK_HOSTS = ("127.0.0.1",)
SHAREGROUP_SETTINGS = (
    "auto_offset_reset",  # 0 latest (the mock's default), 1 earliest
    "record_lock_duration",  # ms
    "max_delivery_attempts",
    "session_timeout",  # ms
    "heartbeat_interval",  # ms
)


class MockClusterError(RuntimeError):
    """A mock-cluster C call failed; ``code`` is the rd_kafka_resp_err_t."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class MockRequest:
    """One request the mock cluster received while tracking was on."""

    broker_id: int
    api_key: int
    timestamp_us: int
    """librdkafka's monotonic clock, in microseconds."""


def find_librdkafka() -> str:
    """Path of the librdkafka shared library bundled with confluent-kafka."""
    import confluent_kafka

    package_dir = os.path.dirname(os.path.abspath(confluent_kafka.__file__))
    site_dir = os.path.dirname(package_dir)
    patterns = [
        os.path.join(site_dir, "confluent_kafka.libs", "librdkafka*.so*"),
        os.path.join(package_dir, ".dylibs", "librdkafka*.dylib"),
        os.path.join(site_dir, "confluent_kafka.libs", "librdkafka*.dll"),
    ]
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise MockClusterError(
        f"librdkafka shared library not found next to confluent_kafka ({package_dir}); searched {patterns}"
    )


_VoidP = ctypes.c_void_p
_CharP = ctypes.c_char_p
_I16 = ctypes.c_int16
_I32 = ctypes.c_int32
_I64 = ctypes.c_int64
_Int = ctypes.c_int
_SizeT = ctypes.c_size_t
_Err = ctypes.c_int  # rd_kafka_resp_err_t is a C enum
_GROUP_ID_NOT_FOUND = 69


# void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
_LogCb = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)


class _Lib:
    """librdkafka functions with declared prototypes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._dll = ctypes.CDLL(path)
        self.conf_new = self._fn("rd_kafka_conf_new", _VoidP, [])
        self.conf_set = self._fn("rd_kafka_conf_set", _Int, [_VoidP, _CharP, _CharP, _CharP, _SizeT])
        self.conf_destroy = self._fn("rd_kafka_conf_destroy", None, [_VoidP])
        self.new = self._fn("rd_kafka_new", _VoidP, [_Int, _VoidP, _CharP, _SizeT])
        self.destroy = self._fn("rd_kafka_destroy", None, [_VoidP])
        self.err2str = self._fn("rd_kafka_err2str", _CharP, [_Err])
        self.err2name = self._fn("rd_kafka_err2name", _CharP, [_Err])
        self.version_str = self._fn("rd_kafka_version_str", _CharP, [])

        self.cluster_new = self._fn("rd_kafka_mock_cluster_new", _VoidP, [_VoidP, _Int])
        self.cluster_destroy = self._fn("rd_kafka_mock_cluster_destroy", None, [_VoidP])
        self.cluster_bootstraps = self._fn("rd_kafka_mock_cluster_bootstraps", _CharP, [_VoidP])
        self.clear_request_errors = self._fn("rd_kafka_mock_clear_request_errors", None, [_VoidP, _I16])
        self.push_request_errors_array = self._fn(
            "rd_kafka_mock_push_request_errors_array",
            None,
            [_VoidP, _I16, _SizeT, ctypes.POINTER(_Err)],
        )
        # Variadic: (mcluster, broker_id, ApiKey, cnt, ...(err, rtt_ms) pairs).
        # Only the fixed part is declared; the pairs are passed as C ints,
        # which is exactly what default argument promotion gives them.
        self.broker_push_request_error_rtts = self._fn(
            "rd_kafka_mock_broker_push_request_error_rtts",
            _Err,
            [_VoidP, _I32, _I16, _SizeT],
        )
        self.broker_error_stack_cnt = self._fn(
            "rd_kafka_mock_broker_error_stack_cnt",
            _Err,
            [_VoidP, _I32, _I16, ctypes.POINTER(_SizeT)],
        )
        self.topic_set_error = self._fn("rd_kafka_mock_topic_set_error", None, [_VoidP, _CharP, _Err])
        self.topic_create = self._fn("rd_kafka_mock_topic_create", _Err, [_VoidP, _CharP, _Int, _Int])
        self.partition_set_leader = self._fn("rd_kafka_mock_partition_set_leader", _Err, [_VoidP, _CharP, _I32, _I32])
        self.partition_set_follower = self._fn(
            "rd_kafka_mock_partition_set_follower", _Err, [_VoidP, _CharP, _I32, _I32]
        )
        self.partition_set_follower_wmarks = self._fn(
            "rd_kafka_mock_partition_set_follower_wmarks",
            _Err,
            [_VoidP, _CharP, _I32, _I64, _I64],
        )
        self.broker_set_down = self._fn("rd_kafka_mock_broker_set_down", _Err, [_VoidP, _I32])
        self.broker_set_up = self._fn("rd_kafka_mock_broker_set_up", _Err, [_VoidP, _I32])
        self.broker_set_rtt = self._fn("rd_kafka_mock_broker_set_rtt", _Err, [_VoidP, _I32, _Int])
        self.coordinator_set = self._fn("rd_kafka_mock_coordinator_set", _Err, [_VoidP, _CharP, _CharP, _I32])
        self.set_apiversion = self._fn("rd_kafka_mock_set_apiversion", _Err, [_VoidP, _I16, _I16, _I16])
        self.start_request_tracking = self._fn("rd_kafka_mock_start_request_tracking", None, [_VoidP])
        self.stop_request_tracking = self._fn("rd_kafka_mock_stop_request_tracking", None, [_VoidP])
        self.get_requests = self._fn(
            "rd_kafka_mock_get_requests",
            ctypes.POINTER(_VoidP),
            [_VoidP, ctypes.POINTER(_SizeT)],
        )
        self.request_id = self._fn("rd_kafka_mock_request_id", _I32, [_VoidP])
        self.request_api_key = self._fn("rd_kafka_mock_request_api_key", _I16, [_VoidP])
        self.request_timestamp = self._fn("rd_kafka_mock_request_timestamp", _I64, [_VoidP])
        self.request_destroy_array = self._fn(
            "rd_kafka_mock_request_destroy_array",
            None,
            [ctypes.POINTER(_VoidP), _SizeT],
        )
        self.clear_requests = self._fn("rd_kafka_mock_clear_requests", None, [_VoidP])
        # KIP-932 share group settings (librdkafka 2.15+): rd_kafka_mock_sharegroup_set_<name>(mcluster, int)
        self.sharegroup_set = {
            name: self._fn(f"rd_kafka_mock_sharegroup_set_{name}", None, [_VoidP, _Int]) for name in SHAREGROUP_SETTINGS
        }
        self.sharegroup_get_member_ids = self._fn(
            "rd_kafka_mock_sharegroup_get_member_ids",
            _Err,
            [_VoidP, _CharP, ctypes.POINTER(ctypes.POINTER(_VoidP)), ctypes.POINTER(_SizeT)],
        )
        self.mem_free = self._fn("rd_kafka_mem_free", None, [_VoidP, _VoidP])
        # KIP-714: what the mock's GetTelemetrySubscriptions answers ask for, and how often.
        self.telemetry_set_requested_metrics = self._fn(
            "rd_kafka_mock_telemetry_set_requested_metrics", _Err, [_VoidP, ctypes.POINTER(_CharP), _SizeT]
        )
        self.telemetry_set_push_interval = self._fn("rd_kafka_mock_telemetry_set_push_interval", _Err, [_VoidP, _I64])
        self.conf_set_log_cb = self._fn("rd_kafka_conf_set_log_cb", None, [_VoidP, _LogCb])

    def _fn(self, name: str, restype: Any, argtypes: list[Any]) -> Callable[..., Any]:
        function = getattr(self._dll, name)
        function.restype = restype
        function.argtypes = argtypes
        fn: Callable[..., Any] = function
        return fn

    def describe(self, code: int) -> str:
        name = self.err2name(code)
        text = self.err2str(code)
        name_s = name.decode() if name else str(code)
        text_s = text.decode() if text else ""
        return f"{name_s} ({code}): {text_s}"


_lib_lock = threading.Lock()
_lib_cache: _Lib | None = None


def _load() -> _Lib:
    global _lib_cache
    with _lib_lock:
        if _lib_cache is None:
            _lib_cache = _Lib(find_librdkafka())
        return _lib_cache


def _check_loopback(bootstraps: str) -> None:
    for entry in bootstraps.split(","):
        host, sep, port = entry.strip().rpartition(":")
        if not sep or host not in _LOOPBACK_HOSTS or not port.isdigit():
            raise MockClusterError(f"mock cluster listener {entry!r} is not on loopback ({bootstraps!r})")


class MockCluster:
    """librdkafka's in-process mock Kafka cluster.

    Brokers have ids ``1..broker_count`` and listen on ``127.0.0.1`` (checked
    at construction). Use as a context manager, or call :meth:`close`.

    :param broker_count: number of mock brokers.
    :param conf: extra librdkafka properties for the throwaway producer handle
        that owns the cluster (it never connects anywhere itself).
    """

    def __init__(self, broker_count: int = 3, conf: dict[str, str] | None = None, *, keep_log: bool = False) -> None:
        """``keep_log``: the owner handle's log lines (what the mock logs, e.g. the client metrics
        it decodes with ``debug=mock``) are kept in `log_lines`, every level."""
        if broker_count < 1:
            raise ValueError("broker_count must be at least 1")
        self._lib = _load()
        self._broker_count = broker_count
        self._rk: int | None = None
        self._mcluster: int | None = None
        properties = {"log_level": "7" if keep_log else "3", "client.id": "kafkawire-mock-owner"}
        properties.update(conf or {})
        self.log_lines: list[tuple[str, str]] = []  # (facility, line), appended from librdkafka's threads
        self._log_cb = _LogCb(lambda _rk, _level, fac, buf: self.log_lines.append((fac.decode(), buf.decode())))

        errstr = ctypes.create_string_buffer(_ERRSTR_SIZE)
        conf_handle = self._lib.conf_new()
        if not conf_handle:
            raise MockClusterError("rd_kafka_conf_new returned NULL")
        try:
            for key, value in properties.items():
                result = self._lib.conf_set(conf_handle, key.encode(), value.encode(), errstr, _ERRSTR_SIZE)
                if result != _RD_KAFKA_CONF_OK:
                    raise MockClusterError(f"rd_kafka_conf_set({key}={value}): {errstr.value.decode()}")
            if keep_log:
                self._lib.conf_set_log_cb(conf_handle, self._log_cb)
            rk = self._lib.new(_RD_KAFKA_PRODUCER, conf_handle, errstr, _ERRSTR_SIZE)
        except BaseException:
            self._lib.conf_destroy(conf_handle)
            raise
        if not rk:
            # rd_kafka_new only takes ownership of conf on success.
            self._lib.conf_destroy(conf_handle)
            raise MockClusterError(f"rd_kafka_new failed: {errstr.value.decode()}")
        self._rk = rk

        mcluster = self._lib.cluster_new(rk, broker_count)
        if not mcluster:
            self._lib.destroy(rk)
            self._rk = None
            raise MockClusterError("rd_kafka_mock_cluster_new returned NULL")
        self._mcluster = mcluster
        raw = self._lib.cluster_bootstraps(mcluster)
        self._bootstraps = raw.decode() if raw else ""
        try:
            _check_loopback(self._bootstraps)
        except MockClusterError:
            self.close()
            raise

    # -- lifecycle --------------------------------------------------------

    def close(self) -> None:
        """Destroy the mock cluster, then its owner handle. Idempotent."""
        mcluster, self._mcluster = self._mcluster, None
        rk, self._rk = self._rk, None
        if mcluster is not None:
            self._lib.cluster_destroy(mcluster)
        if rk is not None:
            self._lib.destroy(rk)

    @property
    def closed(self) -> bool:
        return self._mcluster is None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else self._bootstraps
        return f"<MockCluster brokers={self._broker_count} {state}>"

    # -- information ------------------------------------------------------

    @property
    def bootstraps(self) -> str:
        """Comma-separated ``127.0.0.1:PORT`` list, for ``bootstrap.servers``."""
        self._handle()
        return self._bootstraps

    @property
    def broker_count(self) -> int:
        return self._broker_count

    @property
    def broker_ids(self) -> list[int]:
        return list(range(1, self._broker_count + 1))

    @property
    def librdkafka_version(self) -> str:
        raw = self._lib.version_str()
        return raw.decode() if raw else ""

    # -- topics and partitions -------------------------------------------

    def create_topic(self, name: str, partitions: int = 1, replication: int = 1) -> None:
        self._check(
            self._lib.topic_create(self._handle(), name.encode(), partitions, replication),
            f"topic_create({name!r}, {partitions}, {replication})",
        )

    def topic_set_error(self, topic: str, error: int) -> None:
        """Make Metadata (and AddPartitionsToTxn) report ``error`` for ``topic``.

        Pass 0 to clear it.
        """
        self._lib.topic_set_error(self._handle(), topic.encode(), error)

    def partition_set_leader(self, topic: str, partition: int, broker_id: int) -> None:
        """Move the leader; ``broker_id=-1`` makes the partition leaderless."""
        self._check(
            self._lib.partition_set_leader(self._handle(), topic.encode(), partition, broker_id),
            f"partition_set_leader({topic!r}, {partition}, {broker_id})",
        )

    def partition_set_follower(self, topic: str, partition: int, broker_id: int) -> None:
        """Set the partition's preferred replica (follower) for fetching."""
        self._check(
            self._lib.partition_set_follower(self._handle(), topic.encode(), partition, broker_id),
            f"partition_set_follower({topic!r}, {partition}, {broker_id})",
        )

    def partition_set_follower_wmarks(self, topic: str, partition: int, low: int, high: int) -> None:
        self._check(
            self._lib.partition_set_follower_wmarks(self._handle(), topic.encode(), partition, low, high),
            f"partition_set_follower_wmarks({topic!r}, {partition}, {low}, {high})",
        )

    def coordinator_set(self, key_type: str, key: str, broker_id: int) -> None:
        """Pin the ``"transaction"`` or ``"group"`` coordinator for ``key``."""
        if key_type not in ("transaction", "group"):
            raise ValueError("key_type must be 'transaction' or 'group'")
        self._check(
            self._lib.coordinator_set(self._handle(), key_type.encode(), key.encode(), broker_id),
            f"coordinator_set({key_type!r}, {key!r}, {broker_id})",
        )

    # -- brokers ----------------------------------------------------------

    def broker_set_down(self, broker_id: int) -> None:
        """Disconnect the broker and refuse new connections (-1: all brokers).

        Leadership does not move.
        """
        self._check(
            self._lib.broker_set_down(self._handle(), broker_id),
            f"broker_set_down({broker_id})",
        )

    def broker_set_up(self, broker_id: int) -> None:
        self._check(
            self._lib.broker_set_up(self._handle(), broker_id),
            f"broker_set_up({broker_id})",
        )

    def broker_set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        """Delay every response of the broker (-1: all brokers) by ``rtt_ms``."""
        self._check(
            self._lib.broker_set_rtt(self._handle(), broker_id, rtt_ms),
            f"broker_set_rtt({broker_id}, {rtt_ms})",
        )

    # -- protocol behaviour ------------------------------------------------

    def set_apiversion(self, api_key: int, min_version: int, max_version: int) -> None:
        """Limit the advertised version range of ``api_key``.

        ``-1, -1`` removes the API. The maximum must not exceed what the mock
        implements.
        """
        self._check(
            self._lib.set_apiversion(self._handle(), api_key, min_version, max_version),
            f"set_apiversion({api_key}, {min_version}, {max_version})",
        )

    def push_request_errors(self, api_key: int, errors: Sequence[int]) -> None:
        """The next ``len(errors)`` requests of ``api_key`` (to any broker) fail.

        They fail with these error codes in order; librdkafka's
        ``RD_KAFKA_RESP_ERR__TRANSPORT`` (-195) makes the broker drop the
        connection instead.
        """
        if not errors:
            return
        array = (_Err * len(errors))(*errors)
        self._lib.push_request_errors_array(self._handle(), api_key, len(errors), array)

    def push_request_error_rtts(self, broker_id: int, api_key: int, errors_and_rtts: Sequence[tuple[int, int]]) -> None:
        """Answer the next ``api_key`` requests to ``broker_id`` with (error, delay ms).

        An error of 0 with a delay only slows the response down. Broker errors
        take precedence over the cluster-wide ones of :meth:`push_request_errors`.
        """
        if not errors_and_rtts:
            return
        flat: list[ctypes.c_int] = []
        for error, rtt_ms in errors_and_rtts:
            flat.append(ctypes.c_int(error))
            flat.append(ctypes.c_int(rtt_ms))
        self._check(
            self._lib.broker_push_request_error_rtts(self._handle(), broker_id, api_key, len(errors_and_rtts), *flat),
            f"broker_push_request_error_rtts({broker_id}, {api_key})",
        )

    def error_stack_count(self, broker_id: int, api_key: int) -> int:
        """How many pushed broker errors for ``api_key`` are still pending."""
        count = _SizeT(0)
        self._check(
            self._lib.broker_error_stack_cnt(self._handle(), broker_id, api_key, ctypes.byref(count)),
            f"broker_error_stack_cnt({broker_id}, {api_key})",
        )
        return int(count.value)

    def clear_request_errors(self, api_key: int) -> None:
        self._lib.clear_request_errors(self._handle(), api_key)

    def sharegroup_set(self, name: str, value: int) -> None:
        """A share group setting of every group of the mock (one of SHAREGROUP_SETTINGS)."""
        self._lib.sharegroup_set[name](self._handle(), value)

    def sharegroup_members(self, group_id: str) -> list[str]:
        """The member ids the mock's share group ``group_id`` has now ([] before it exists)."""
        ids = ctypes.POINTER(_VoidP)()
        count = _SizeT(0)
        code = self._lib.sharegroup_get_member_ids(
            self._handle(), group_id.encode(), ctypes.byref(ids), ctypes.byref(count)
        )
        if code == _GROUP_ID_NOT_FOUND:
            return []
        self._check(code, f"sharegroup_get_member_ids({group_id!r})")
        members: list[str] = []
        try:
            for i in range(count.value):
                members.append(ctypes.string_at(ids[i]).decode())
        finally:  # librdkafka allocated the strings and the array: its allocator frees them
            for i in range(count.value):
                self._lib.mem_free(self._rk, ids[i])
            if ids:
                self._lib.mem_free(self._rk, ctypes.cast(ids, _VoidP))
        return members

    # -- client metrics (KIP-714) ------------------------------------------

    def telemetry_set_requested_metrics(self, prefixes: Sequence[str]) -> None:
        """The metric name prefixes the mock's subscriptions ask for ([]: none, no push)."""
        array = (_CharP * max(1, len(prefixes)))(*[p.encode() for p in prefixes])
        self._check(
            self._lib.telemetry_set_requested_metrics(self._handle(), array if prefixes else None, len(prefixes)),
            "telemetry_set_requested_metrics",
        )

    def telemetry_set_push_interval(self, ms: int) -> None:
        self._check(self._lib.telemetry_set_push_interval(self._handle(), ms), "telemetry_set_push_interval")

    def pushed_metric_names(self) -> list[str]:
        """The metric names the mock decoded from PushTelemetry requests (``keep_log`` on), in order."""
        marker = "string value: "
        return [
            line.split(marker, 1)[1]
            for fac, line in list(self.log_lines)
            if fac == "MOCKTELEMETRY" and marker + "org.apache.kafka." in line
        ]

    # -- request tracking --------------------------------------------------

    def start_request_tracking(self) -> None:
        self._lib.start_request_tracking(self._handle())

    def stop_request_tracking(self) -> None:
        """Stop recording; what was recorded stays until :meth:`clear_requests`."""
        self._lib.stop_request_tracking(self._handle())

    def clear_requests(self) -> None:
        self._lib.clear_requests(self._handle())

    def get_requests(self) -> list[MockRequest]:
        """Requests recorded since tracking started (or the last clear), in order."""
        count = _SizeT(0)
        array = self._lib.get_requests(self._handle(), ctypes.byref(count))
        if not array:
            return []
        n = int(count.value)
        try:
            return [
                MockRequest(
                    broker_id=int(self._lib.request_id(array[i])),
                    api_key=int(self._lib.request_api_key(array[i])),
                    timestamp_us=int(self._lib.request_timestamp(array[i])),
                )
                for i in range(n)
            ]
        finally:
            self._lib.request_destroy_array(array, n)

    def requests_of(self, api_key: int) -> list[MockRequest]:
        return [request for request in self.get_requests() if request.api_key == api_key]

    def api_keys_seen(self) -> set[int]:
        return {request.api_key for request in self.get_requests()}

    # -- internals ---------------------------------------------------------

    def _handle(self) -> int:
        if self._mcluster is None:
            raise MockClusterError("the mock cluster is closed")
        return self._mcluster

    def _check(self, code: int, what: str) -> None:
        if code != 0:
            raise MockClusterError(f"{what} failed: {self._lib.describe(code)}", code)


def describe_error(code: int) -> str:
    """librdkafka's name and description of an rd_kafka_resp_err_t."""
    return _load().describe(code)


def api_key_names(keys: Iterable[int]) -> list[str]:
    """Readable names for API keys (for assertion messages)."""
    return [API_BY_KEY[key].name if key in API_BY_KEY else str(key) for key in keys]
