"""What every broker connection of a client shares: its settings (from the parsed config) and the
transport it connects with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..base.debug import OFF, Debug
from ..security.settings import SecuritySettings
from .resolve import FAMILIES
from .transport import SocketOptions, TcpTransport, Transport

# (family, sockaddr, host, port) -> a transport not yet started
TransportFactory = Callable[[int, Any, str, int], Transport]


def tcp_transport(family: int, address: Any, host: str, port: int) -> Transport:
    return TcpTransport(family, address, f"{host}:{port}")


@dataclass
class ConnectionSettings:
    client_id: str
    request_timeout: float
    connect_timeout: float
    api_version_timeout: float
    backoff_ms: int
    backoff_max_ms: int
    max_response_size: int
    max_in_flight: int
    security: SecuritySettings | None = None  # None: plaintext, no SASL
    debug: Debug = OFF  # the client's diagnostics (broker, protocol, security contexts)
    socket: SocketOptions = field(default_factory=SocketOptions)
    address_family: int = 0  # socket.AF_UNSPEC, AF_INET or AF_INET6 (broker.address.family)
    address_ttl: float = 0.0  # seconds a host name's addresses are kept (broker.address.ttl)
    idle_timeout: float = 0.0  # seconds without traffic before a connection is closed; 0: never
    log_close: bool = True  # log.connection.close: log a broker closing the connection
    stats_windows: bool = False  # statistics.interval.ms > 0: keep the brokers' window statistics
    software_name: str = "kafkawire"  # client.software.name: what ApiVersions says this client is
    software_version: str = __version__  # client.software.version

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
