"""From a request frame to an answer frame: decode with kafkawire's own codec (the schemas serve
both sides), apply the faults, run the API's handler, encode. Answers that wait (Parked) are
polled at every loop turn. Sans-IO: the server passes the time and a ``reply`` to call.
"""

from __future__ import annotations

import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kafkawire.base.debug import OFF, Debug
from kafkawire.protocol import error_codes as E
from kafkawire.protocol.apis import API_BY_KEY
from kafkawire.protocol.codec import Struct, decode_from
from kafkawire.protocol.headers import API_VERSIONS_KEY, decode_request_header, encode_response
from kafkawire.protocol.primitives import DecodeError
from kafkawire.protocol.schema import Api
from kafkawire.protocol.values import UnsupportedFieldError

from . import handlers_data, handlers_groups, handlers_meta, handlers_sasl, handlers_txn, mock_log
from .faults import TRANSPORT_ERROR, error_response
from .world import Handler, Parked, Request, World

HANDLERS: dict[int, tuple[Handler, int, int]] = {
    **handlers_meta.HANDLERS,
    **handlers_data.HANDLERS,
    **handlers_groups.HANDLERS,
    **handlers_txn.HANDLERS,
    **handlers_sasl.HANDLERS,
}
API_VERSIONS_RANGE = (0, 3)
HISTORY_LIMIT = 100_000
NO_ANSWER = b""  # Produce with acks=0: the slot is settled, nothing is sent

Reply = Callable[[bytes | None, int], None]  # (frame or None to close the connection, delay in ms)


@dataclass(frozen=True)
class MockRequest:
    """One request a broker of the mock cluster received."""

    broker_id: int
    api_key: int
    api_version: int
    timestamp_ms: int
    client_id: str | None
    body: Struct

    @property
    def api_name(self) -> str:
        return API_BY_KEY[self.api_key].name


@dataclass
class _Waiting:
    parked: Parked
    request: Request
    correlation_id: int
    reply: Reply
    delay_ms: int


class Dispatcher:
    def __init__(self, world: World, debug: Debug = OFF) -> None:
        self.world = world
        self.debug = debug  # the ``mock`` context's lines (testing/mock_log.py)
        self.history: deque[MockRequest] = deque(maxlen=HISTORY_LIMIT)
        self.failures: list[str] = []  # handler crashes: a bug in the mock, reported by close()
        self._waiting: list[_Waiting] = []

    def advertised(self) -> list[dict[str, Any]]:
        out = []
        ranges = {key: (low, high) for key, (_, low, high) in HANDLERS.items()}
        ranges[API_VERSIONS_KEY] = API_VERSIONS_RANGE
        for key, (low, high) in sorted(ranges.items()):
            low, high = self.world.faults.versions.get(key, (low, high))
            if low >= 0 and high >= 0:
                out.append({"api_key": key, "min_version": low, "max_version": high})
        return out

    def handle(self, broker_id: int, connection: int, frame: bytes, now_ms: int, reply: Reply) -> None:
        try:
            header, pos = decode_request_header(frame)
        except DecodeError:
            reply(None, 0)
            return
        api = API_BY_KEY[header.request_api_key]
        version = header.request_api_version
        ranges = {a["api_key"]: (a["min_version"], a["max_version"]) for a in self.advertised()}
        low, high = ranges.get(api.key, (0, -1))
        if api.key == API_VERSIONS_KEY and not low <= version <= high:
            body = {"error_code": E.UNSUPPORTED_VERSION, "api_keys": self.advertised()}
            reply(_frame(api, 0, header.correlation_id, body), self.world.faults.rtt_ms.get(broker_id, 0))
            return
        if not low <= version <= high or not self.world.may_serve(connection, api.key):
            if self.debug.mock:
                mock_log.refused(self.debug, broker_id, api, version, "version not advertised or not authenticated")
            reply(None, 0)
            return
        try:  # bytes after the body are ignored, as Kafka does (librdkafka pads some Metadata v12 requests)
            body = decode_from(api.request, version, frame, pos)[0]
        except DecodeError:
            reply(None, 0)
            return
        self.history.append(MockRequest(broker_id, api.key, version, now_ms, header.client_id, body))
        if self.debug.mock:
            mock_log.received(self.debug, broker_id, connection, api, version, header.client_id)
        request = Request(broker_id, connection, api, version, header, body, now_ms)
        error, extra = self.world.faults.next_error(broker_id, api.key)
        delay = self.world.faults.rtt_ms.get(broker_id, 0) + extra
        if error == TRANSPORT_ERROR:
            if self.debug.mock:
                mock_log.refused(self.debug, broker_id, api, version, "injected transport error")
            reply(None, delay)
            return
        if error:
            if self.debug.mock:
                mock_log.injected(self.debug, broker_id, api, version, error, delay)
            self._send(request, header.correlation_id, error_response(api, version, body, error), reply, delay)
            return
        try:
            if api.key == API_VERSIONS_KEY:
                answer: Any = {"error_code": E.NONE, "api_keys": self.advertised()}
            else:
                answer = HANDLERS[api.key][0](self.world, request)
        except Exception:  # a bug in the mock: the connection closes, close() reports it
            self.failures.append(traceback.format_exc())
            reply(None, 0)
            return
        if isinstance(answer, Parked):
            self._waiting.append(_Waiting(answer, request, header.correlation_id, reply, delay))
        elif answer is None:
            reply(NO_ANSWER, delay)
        else:
            self._send(request, header.correlation_id, answer, reply, delay)

    def tick(self, now_ms: int) -> None:
        """Expire members, then answer the waiting requests that are ready."""
        self.world.tick(now_ms)
        still = []
        for waiting in self._waiting:
            try:
                body = waiting.parked.poll(now_ms, now_ms >= waiting.parked.deadline_ms)
            except Exception:
                self.failures.append(traceback.format_exc())
                waiting.reply(None, 0)
                continue
            if body is None:
                still.append(waiting)
            else:
                self._send(waiting.request, waiting.correlation_id, body, waiting.reply, waiting.delay_ms)
        self._waiting = still

    def next_deadline(self) -> int | None:
        return min((w.parked.deadline_ms for w in self._waiting), default=None)

    def forget_connection(self, connection: int) -> None:
        self._waiting = [w for w in self._waiting if w.request.connection != connection]
        self.world.authenticated.pop(connection, None)

    def _send(self, request: Request, correlation_id: int, body: dict[str, Any], reply: Reply, delay: int) -> None:
        try:
            frame = _frame(request.api, request.version, correlation_id, body)
        except (UnsupportedFieldError, TypeError, ValueError, AttributeError, KeyError):
            self.failures.append(f"{request.api.name} v{request.version}: {traceback.format_exc()}")
            reply(None, 0)
            return
        if self.debug.mock:
            mock_log.sending(self.debug, request.broker_id, request.api, request.version, len(frame), delay)
        reply(frame, delay)


def _frame(api: Api, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    payload = encode_response(api, version, correlation_id, body)
    return len(payload).to_bytes(4, "big") + payload
