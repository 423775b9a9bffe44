"""What every broker connection of a client shares: its settings (from the parsed config) and the
transport it connects with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._version import __version__
from ..base.debug import OFF, Debug
from ..security.settings import SecuritySettings
from .resolve import FAMILIES
from .transport import SYSTEM_DEFAULTS, SocketOptions, TcpTransport, Transport

# (family, sockaddr, host, port) -> a transport not yet started
TransportFactory = Callable[[int, Any, str, int], Transport]


def tcp_transport(family: int, address: Any, host: str, port: int) -> Transport:
    return TcpTransport(family, address, f"{host}:{port}")


class ConnectionSettings:
    """(A plain class: a dataclass cost about a millisecond of every client's start-up to create.)"""

    def __init__(
        self,
        client_id: str,
        request_timeout: float,
        connect_timeout: float,
        api_version_timeout: float,
        backoff_ms: int,
        backoff_max_ms: int,
        max_response_size: int,
        max_in_flight: int,
        security: SecuritySettings | None = None,  # None: plaintext, no SASL
        debug: Debug = OFF,  # the client's diagnostics (broker, protocol, security contexts)
        socket: SocketOptions = SYSTEM_DEFAULTS,
        address_family: int = 0,  # socket.AF_UNSPEC, AF_INET or AF_INET6 (broker.address.family)
        address_ttl: float = 0.0,  # seconds a host name's addresses are kept (broker.address.ttl)
        idle_timeout: float = 0.0,  # seconds without traffic before a connection is closed; 0: never
        log_close: bool = True,  # log.connection.close: log a broker closing the connection
        stats_windows: bool = False,  # statistics.interval.ms > 0: keep the brokers' window statistics
        software_name: str = "kafkawire",  # client.software.name: what ApiVersions says this client is
        software_version: str = __version__,  # client.software.version
    ) -> None:
        self.client_id = client_id
        self.request_timeout = request_timeout
        self.connect_timeout = connect_timeout
        self.api_version_timeout = api_version_timeout
        self.backoff_ms = backoff_ms
        self.backoff_max_ms = backoff_max_ms
        self.max_response_size = max_response_size
        self.max_in_flight = max_in_flight
        self.security = security
        self.debug = debug
        self.socket = socket
        self.address_family = address_family
        self.address_ttl = address_ttl
        self.idle_timeout = idle_timeout
        self.log_close = log_close
        self.stats_windows = stats_windows
        self.software_name = software_name
        self.software_version = software_version

    @classmethod
    def from_config(cls, conf: Mapping[str, Any], debug: Debug = OFF) -> ConnectionSettings:
        return cls(
            client_id=conf["client.id"],
            request_timeout=conf["socket.timeout.ms"] / 1000,
            connect_timeout=conf["socket.connection.setup.timeout.ms"] / 1000,
            api_version_timeout=conf["api.version.request.timeout.ms"] / 1000,
            backoff_ms=conf["reconnect.backoff.ms"],
            backoff_max_ms=conf["reconnect.backoff.max.ms"],
            max_response_size=conf["receive.message.max.bytes"],
            max_in_flight=conf["max.in.flight.requests.per.connection"],
            security=SecuritySettings(conf),
            debug=debug,
            socket=SocketOptions(
                send_buffer=conf["socket.send.buffer.bytes"],
                receive_buffer=conf["socket.receive.buffer.bytes"],
                keepalive=conf["socket.keepalive.enable"],
                nodelay=conf["socket.nagle.disable"],
            ),
            address_family=FAMILIES[conf["broker.address.family"]],
            address_ttl=conf["broker.address.ttl"] / 1000,
            idle_timeout=conf["connections.max.idle.ms"] / 1000,
            log_close=conf["log.connection.close"],
            stats_windows=conf.get("statistics.interval.ms", 0) > 0,  # (absent: a test's own settings)
            software_name=conf.get("client.software.name") or "kafkawire",
            software_version=conf.get("client.software.version") or __version__,
        )

    def transport(self) -> TransportFactory:
        """TCP, or TLS over TCP under security.protocol ssl / sasl_ssl, with the socket options."""
        tls = None if self.security is None else self.security.tls
        if tls is not None:
            from .tls import tls_transport  # ssl is imported only by clients that configure TLS

            return tls_transport(tls, self.socket)
        options = self.socket

        def tcp(family: int, address: Any, host: str, port: int) -> Transport:
            return TcpTransport(family, address, f"{host}:{port}", options)

        return tcp
