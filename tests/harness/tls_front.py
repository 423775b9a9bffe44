"""TLS in front of a plaintext broker (Tansu) with ``socat OPENSSL-LISTEN``: the judge of kafkawire's
TLS on a second, non-JVM TLS server (OpenSSL's, through socat), with the protocol versions and the
certificate checks chosen per front.

socat decrypts and forwards bytes unchanged; the broker must advertise the front's port
(``TansuBroker(advertised_port=front.port)``) so every connection a client makes goes through TLS.
So the front binds nothing until ``start(upstream_port)``: its port is picked first, the broker is
started advertising it, then socat listens there. socat is a Debian package (``make test`` installs
it when running as root); when it is missing the tests skip, naming the command.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from kafkawire.local_broker import _free_loopback_port, _with_parent_death_signal

INSTALL_HINT = "socat is missing: apt-get install -y socat (make test installs it when run as root)"


def socat() -> str | None:
    return shutil.which("socat")


class TlsFront:
    """One ``socat OPENSSL-LISTEN`` on a free loopback port, forwarding to ``127.0.0.1:upstream``.

    ``client_ca``: ask for a client certificate signed by it (mutual TLS, socat's ``verify=1``);
    ``min_version``/``max_version``: socat's names ("TLS1.2", "TLS1.3")."""

    def __init__(
        self,
        cert: Path,
        key: Path,
        *,
        client_ca: Path | None = None,
        min_version: str | None = None,
        max_version: str | None = None,
    ) -> None:
        self.port = _free_loopback_port()
        self._options = [
            f"cert={cert}",
            f"key={key}",
            "verify=0" if client_ca is None else f"verify=1,cafile={client_ca}",
        ]
        if min_version:
            self._options.append(f"openssl-min-proto-version={min_version}")
        if max_version:
            self._options.append(f"openssl-max-proto-version={max_version}")
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = Path(cert).with_name(f"socat-{self.port}.log")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, upstream_port: int, timeout: float = 10.0) -> TlsFront:
        binary = socat()
        if binary is None:
            raise RuntimeError(INSTALL_HINT)
        listen = ",".join([f"OPENSSL-LISTEN:{self.port}", "bind=127.0.0.1", "reuseaddr", "fork", *self._options])
        # Its own process group: stop() ends the per-connection children forked for each client too.
        with open(self._log, "wb") as log:
            self._proc = subprocess.Popen(
                _with_parent_death_signal([binary, listen, f"TCP:127.0.0.1:{upstream_port}"]),
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"socat exited: {self._log.read_text(errors='replace')[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"socat did not listen on {self.port} within {timeout} s")

    def stop(self) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        self._proc = None
