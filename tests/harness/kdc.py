"""A real MIT Kerberos KDC (Debian ``krb5-kdc``) with a realm of its own, on 127.0.0.1, for the tests.

The realm is made in a fresh directory (``kdb5_util create``), principals and keytabs with
``kadmin.local``; ``krb5kdc`` listens on a free loopback port (TCP and UDP), dies with the process
that started it and is stopped by ``stop()``. ``krb5_conf`` is what clients read (``KRB5_CONFIG``):
no DNS at all, and ``rdns``/``dns_canonicalize_hostname`` off, so a client that named a broker by its
peer's IP instead of the host it was given would ask for a principal that does not exist.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from kafkawire.local_broker import _free_loopback_port, _with_parent_death_signal

REALM = "KAFKAWIRE.TEST"
PROGRAMS = ("/usr/sbin/krb5kdc", "/usr/sbin/kdb5_util", "/usr/sbin/kadmin.local", "/usr/bin/kinit")
INSTALL_HINT = (
    "apt-get install -y krb5-kdc krb5-admin-server krb5-user libkrb5-dev (make test does it when run as root)"
)
ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"


class KdcUnavailable(RuntimeError):
    """The MIT Kerberos programs are missing or the KDC did not start."""


class Kdc:
    """One realm and its KDC. ``env`` holds the variables a client process needs (KRB5_CONFIG)."""

    def __init__(self, realm: str = REALM, start_timeout: float = 60.0) -> None:
        self.realm = realm
        self.start_timeout = start_timeout
        self.port = 0
        self.dir = Path()
        self._procs: list[subprocess.Popen[bytes]] = []

    @property
    def krb5_conf(self) -> Path:
        return self.dir / "krb5.conf"

    @property
    def env(self) -> dict[str, str]:
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.dir / "kdc.conf")}

    def start(self) -> Kdc:
        missing = [p for p in PROGRAMS if not os.access(p, os.X_OK)]
        if missing:
            raise KdcUnavailable(f"missing {', '.join(missing)}: {INSTALL_HINT}")
        self.dir = Path(tempfile.mkdtemp(prefix="kafkawire-kdc-"))
        self.port = _free_loopback_port()
        self.write_krb5_conf(self.krb5_conf, self.port)
        self._write_kdc_conf(self.dir / "kdc.conf", self.port)
        (self.dir / "kadm5.acl").write_text("")
        self._run(["/usr/sbin/kdb5_util", "create", "-s", "-r", self.realm, "-P", "kdc-master-key"])
        self._spawn([], self.dir / "kdc.conf", self.port)
        return self

    def start_skewed(self, seconds: int) -> int:
        """A second KDC of the same realm whose clock runs ``seconds`` ahead (libfaketime, Debian
        ``faketime``); its port. KdcUnavailable when faketime is missing."""
        if not os.access("/usr/bin/faketime", os.X_OK):
            raise KdcUnavailable("missing /usr/bin/faketime: apt-get install -y faketime")
        port = _free_loopback_port()
        profile = self.dir / f"kdc-{port}.conf"
        self._write_kdc_conf(profile, port)
        self._spawn(["/usr/bin/faketime", "-f", f"{seconds:+d}s"], profile, port)
        return port

    def _write_kdc_conf(self, path: Path, port: int) -> None:
        path.write_text(
            "[kdcdefaults]\n"
            f" kdc_listen = 127.0.0.1:{port}\n"
            f" kdc_tcp_listen = 127.0.0.1:{port}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  database_name = {self.dir / 'principal'}\n"
            f"  key_stash_file = {self.dir / 'stash'}\n"
            f"  acl_file = {self.dir / 'kadm5.acl'}\n"
            "  max_life = 1h\n"
            f"  supported_enctypes = {ENCTYPES}\n"
            " }\n"
            "[logging]\n"
            f" kdc = FILE:{self.dir / 'kdc.log'}\n"
        )

    def _spawn(self, prefix: list[str], profile: Path, port: int) -> None:
        env = {**os.environ, **self.env, "KRB5_KDC_PROFILE": str(profile)}
        with open(self.dir / f"krb5kdc-{port}.out", "wb") as out:
            proc = subprocess.Popen(
                _with_parent_death_signal([*prefix, "/usr/sbin/krb5kdc", "-n", "-r", self.realm]),
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
            )
        self._procs.append(proc)
        self._wait_listening(proc, port)

    def write_krb5_conf(self, path: Path, port: int, **libdefaults: str) -> None:
        """A client's krb5.conf for this realm with its KDC at ``127.0.0.1:port`` (another port: a
        KDC that does not answer); ``libdefaults`` adds or overrides settings (e.g. clockskew)."""
        settings = {
            "default_realm": self.realm,
            "dns_lookup_kdc": "false",
            "dns_lookup_realm": "false",
            "rdns": "false",
            "dns_canonicalize_hostname": "false",
            "udp_preference_limit": "1",  # TCP: a KDC that is not there is known at once
            "ticket_lifetime": "1h",
            "forwardable": "false",
            **libdefaults,
        }
        lines = ["[libdefaults]", *(f" {k} = {v}" for k, v in settings.items())]
        lines += ["[realms]", f" {self.realm} = {{", f"  kdc = 127.0.0.1:{port}", " }", ""]
        path.write_text("\n".join(lines))

    def add_principal(self, name: str, keytab: Path | None = None) -> str:
        """Create ``name`` with a random key (written to ``keytab`` when given); the full principal."""
        self.run_kadmin(f"addprinc -randkey {name}")
        if keytab is not None:
            self.run_kadmin(f"ktadd -k {keytab} {name}")
        return f"{name}@{self.realm}"

    def run_kadmin(self, query: str) -> None:
        """One kadmin.local query on this realm's database (``delprinc -force x``, ``addprinc -pw ...``)."""
        self._run(["/usr/sbin/kadmin.local", "-r", self.realm, "-q", query])

    def kinit(self, principal: str, keytab: Path, ccache: Path) -> None:
        """Get a ticket for ``principal`` into the cache file ``ccache`` (what a user's kinit does)."""
        self._run(["/usr/bin/kinit", "-k", "-t", str(keytab), "-c", f"FILE:{ccache}", principal])

    def stop(self) -> None:
        for proc in self._procs:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
        if self.dir != Path():
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = Path()

    def __enter__(self) -> Kdc:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self, argv: list[str]) -> None:
        done = subprocess.run(
            argv, env={**os.environ, **self.env}, capture_output=True, timeout=60, stdin=subprocess.DEVNULL
        )
        if done.returncode != 0:
            raise KdcUnavailable(f"{' '.join(argv[:2])} failed: {done.stderr.decode(errors='replace')[-500:]}")

    def _wait_listening(self, proc: subprocess.Popen[bytes], port: int) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        log = (self.dir / f"krb5kdc-{port}.out").read_bytes()[-2000:].decode(errors="replace")
        self.stop()
        raise KdcUnavailable(f"krb5kdc did not start: {log}")
