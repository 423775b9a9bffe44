"""Kerberos for ``sasl.mechanism=GSSAPI``: the client's credentials and the GSS-API security contexts
that `core.sasl.GssapiClient` converses through. The only module that imports the optional
``gssapi`` package (``pip install kafkawire[gssapi]``; it builds against the system's Kerberos).

Credentials, as librdkafka gets them on Linux:
- ``sasl.kerberos.keytab`` without ``sasl.kerberos.kinit.cmd``: the key of
  ``sasl.kerberos.principal`` is taken from the keytab by GSS-API itself, into a ticket cache in
  this client's memory (what librdkafka's default command, ``kinit -R -t "%{sasl.kerberos.keytab}"
  -k %{sasl.kerberos.principal} || kinit -t ...``, does, without a shell and without writing the
  user's cache); MIT Kerberos gets a new ticket from the keytab before the last one ends.
- ``sasl.kerberos.kinit.cmd`` set (with ``sasl.kerberos.min.time.before.relogin`` > 0): run
  through the shell as librdkafka runs it (``%{property}`` replaced by the property's value) once
  while the client is made, then every ``min.time.before.relogin`` ms; tickets come from the
  default cache it fills (``KRB5CCNAME``).
- otherwise the user's ticket cache (``kinit`` before; ``KRB5CCNAME``).

A connection's first token needs the KDC (a service ticket), so it is made on a worker thread
and the handshake waits for it (the same path an OIDC token takes); the later steps are local.
Errors name the cause and what to check; Kerberos' own messages carry principal names and cache
paths, never keys or passwords.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import struct
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from ..core.sasl import GssapiClient, SaslError

log = logging.getLogger("kafkawire.security.settings")

EXTRA_HINT = (
    "sasl.mechanism=GSSAPI needs the gssapi package: pip install 'kafkawire[gssapi]' "
    "(it builds against the system's Kerberos: Debian/Ubuntu libkrb5-dev, Fedora krb5-devel)"
)
KINIT_TIMEOUT = 30.0  # a kinit command that hangs (asking for a password on a terminal) is cut off
FIRST_TOKEN_KEPT = 60.0  # a first token no connection took within this long is dropped (authenticators age)
# MIT's MEMORY ticket caches live, by name, as long as the process: a name is never given twice (an
# object's id() is, and a later client would find an earlier one's principal in "its" cache).
_MEMORY_CACHES = itertools.count(1)

# MIT Kerberos' error codes (the krb5 com_err table, base -1765328384) -> what the user should check.
KDC_ERR_C_PRINCIPAL_UNKNOWN = -1765328378
KDC_ERR_S_PRINCIPAL_UNKNOWN = -1765328377
KDC_ERR_PREAUTH_FAILED = -1765328360
KRB_AP_ERR_TKT_EXPIRED = -1765328352
KRB_AP_ERR_SKEW = -1765328347
KRB5_CC_NOTFOUND = -1765328243
KRB5_REALM_UNKNOWN = -1765328230
KRB5_KDC_UNREACH = -1765328228
KRB5_KDCREP_SKEW = -1765328236
KRB5_KT_NOTFOUND = -1765328203
KRB5_FCC_NOFILE = -1765328189
KG_EMPTY_CCACHE = -1765328174  # (mechglue: "credential cache is empty")

_NO_CREDENTIALS = (
    "no Kerberos credentials: set sasl.kerberos.keytab (with sasl.kerberos.principal), "
    "or get a ticket with kinit before (KRB5CCNAME)"
)
_UNREACHABLE = "the KDC did not answer: check krb5.conf's realm (KRB5_CONFIG) and that its KDC is reachable"
_SKEW = (
    "this machine's clock and the KDC's (or the broker's) differ by more than the allowed skew: synchronise the clocks"
)
HINTS: dict[int, str] = {
    KDC_ERR_C_PRINCIPAL_UNKNOWN: "the KDC does not know the client principal: check sasl.kerberos.principal",
    KDC_ERR_S_PRINCIPAL_UNKNOWN: "the KDC does not know the broker's service principal: check "
    "sasl.kerberos.service.name and the broker's host name as this client was given it",
    KDC_ERR_PREAUTH_FAILED: "the KDC refused the key: the keytab's key for sasl.kerberos.principal is not the KDC's",
    KRB_AP_ERR_TKT_EXPIRED: "the Kerberos ticket has expired: kinit again, or use sasl.kerberos.keytab",
    KRB_AP_ERR_SKEW: _SKEW,
    KRB5_KDCREP_SKEW: _SKEW,
    KRB5_REALM_UNKNOWN: _UNREACHABLE,
    KRB5_KDC_UNREACH: _UNREACHABLE,
    KRB5_KT_NOTFOUND: "sasl.kerberos.keytab holds no key for sasl.kerberos.principal",
    KRB5_CC_NOTFOUND: _NO_CREDENTIALS,
    KRB5_FCC_NOFILE: _NO_CREDENTIALS,
    KG_EMPTY_CCACHE: _NO_CREDENTIALS,
}


def import_gssapi() -> Any:
    """The ``gssapi`` module; ImportError saying which extra to install when it is missing."""
    try:
        import gssapi  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise ImportError(EXTRA_HINT) from None
    return gssapi


def explain(exc: BaseException) -> str:
    """A GSS-API failure as one line: what to check (when known), then Kerberos' own words."""
    minor = getattr(exc, "min_code", None)
    try:
        words = exc.gen_message() if hasattr(exc, "gen_message") else str(exc)
    except Exception:
        words = type(exc).__name__
    words = " ".join(str(words).split())
    hint = HINTS.get(_signed32(minor)) if isinstance(minor, int) else None
    if hint is None and "No Kerberos credentials available" in words:
        hint = _NO_CREDENTIALS
    return f"{hint} ({words})" if hint else words


def keytab_principals(path: str) -> set[str] | None:
    """The principals (``name/instance@REALM``) a keytab holds keys for, from MIT's file format
    (version 0x0502: size-prefixed entries, a negative size a hole); None when the file is not in
    that format. Only the names are read, never a key."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\x05\x02":
        return None
    found: set[str] = set()
    pos = 2
    try:
        while pos + 4 <= len(data):
            size = struct.unpack_from(">i", data, pos)[0]
            pos += 4
            if pos + abs(size) > len(data):
                return None  # cut short: not a keytab to judge by
            if size > 0:
                entry = memoryview(data)[pos : pos + size]
                (count,) = struct.unpack_from(">H", entry, 0)
                at = 2
                parts = []
                for _ in range(count + 1):  # the realm, then the components
                    (length,) = struct.unpack_from(">H", entry, at)
                    parts.append(bytes(entry[at + 2 : at + 2 + length]).decode("utf-8", "replace"))
                    at += 2 + length
                found.add("/".join(parts[1:]) + "@" + parts[0])
            pos += abs(size)
    except struct.error:
        return None
    return found


def _signed32(code: int) -> int:
    return code - (1 << 32) if code >= 1 << 31 else code


def render_command(command: str, config: Mapping[str, Any]) -> str:
    """librdkafka's ``%{property}`` placeholders replaced by the properties' values (unknown: empty)."""

    def value(match: re.Match[str]) -> str:
        found = config.get(match.group(1))
        return "" if found is None else str(found)

    return re.sub(r"%\{([\w.]+)\}", value, command)


class _Context:
    """`core.sasl.GssContext` over one ``gssapi.SecurityContext``; failures become SaslError."""

    def __init__(self, context: Any) -> None:
        self._context = context

    @property
    def complete(self) -> bool:
        return bool(self._context.complete)

    def step(self, token: bytes | None) -> bytes | None:
        try:
            return self._context.step(token)  # type: ignore[no-any-return]
        except Exception as exc:
            raise SaslError(explain(exc)) from None

    def unwrap(self, message: bytes) -> bytes:
        try:
            return self._context.unwrap(message).message  # type: ignore[no-any-return]
        except Exception as exc:
            raise SaslError(f"the server's security-layer offer did not unwrap: {explain(exc)}") from None

    def wrap(self, payload: bytes) -> bytes:
        try:
            return self._context.wrap(payload, False).message  # type: ignore[no-any-return]
        except Exception as exc:
            raise SaslError(explain(exc)) from None


class KerberosLogin:
    """One client's Kerberos: its credentials, a kinit command's renewals, and first tokens made
    on worker threads for the connections that ask (`client()`)."""

    def __init__(self, config: Mapping[str, Any], login_module: Mapping[str, str] | None = None) -> None:
        self._gssapi = import_gssapi()
        self.service = config["sasl.kerberos.service.name"]
        self.principal = config["sasl.kerberos.principal"]
        self._keytab = config["sasl.kerberos.keytab"]
        ticket_cache = None
        if login_module is not None:
            # Java's Krb5LoginModule (sasl.jaas.config, Spark's kafka.sasl.jaas.config) names the same
            # things; Kafka reads serviceName from it too.
            if login_module.get("useKeyTab", "false").lower() == "true" and login_module.get("keyTab"):
                self._keytab = login_module["keyTab"]
            self.principal = login_module.get("principal") or self.principal
            self.service = login_module.get("serviceName") or self.service
            if login_module.get("useTicketCache", "false").lower() == "true":
                ticket_cache = login_module.get("ticketCache")
        self._command = config["sasl.kerberos.kinit.cmd"]
        self._relogin = config["sasl.kerberos.min.time.before.relogin"] / 1000
        self._lock = threading.Lock()
        self._made: dict[str, deque[tuple[float, GssapiClient | SaslError]]] = {}
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._store: dict[bytes, bytes] | None = None
        runs_command = bool(self._command) and self._relogin > 0
        if runs_command:
            self._rendered = render_command(self._command, config)
            self._kinit()  # raises, naming the failure, when the first run fails
        elif self._keytab:
            if not os.access(self._keytab, os.R_OK):
                raise ValueError(f'sasl.kerberos.keytab: cannot read the keytab file "{self._keytab}"')
            self._check_keytab()
            self._store = {
                b"client_keytab": self._keytab.encode(),
                b"ccache": f"MEMORY:kafkawire-{os.getpid()}-{next(_MEMORY_CACHES)}".encode(),
            }
        elif ticket_cache:
            self._store = {b"ccache": ticket_cache.encode()}
        if self._store is None or b"client_keytab" not in self._store:
            self._credentials()  # a ticket cache is checked now; a keytab's key meets the KDC per connection
        if runs_command:
            self._renewer = threading.Thread(target=self._renew, name="kafkawire-kinit", daemon=True)
            self._renewer.start()

    def _check_keytab(self) -> None:
        """ValueError when the keytab holds no key for the principal (MIT would only say, at the
        first connection, that no credentials cache was found)."""
        gssapi = self._gssapi
        try:
            name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
            principal = str(name.canonicalize(gssapi.MechType.kerberos))
        except Exception as exc:
            raise ValueError(f"sasl.kerberos.principal: {explain(exc)}") from None
        held = keytab_principals(self._keytab)
        if held is not None and principal not in held:
            holds = ", ".join(sorted(held)) or "no key at all"
            raise ValueError(
                f'sasl.kerberos.keytab "{self._keytab}" holds no key for sasl.kerberos.principal {principal} (it holds: {holds})'
            )

    def _credentials(self) -> Any:
        gssapi = self._gssapi
        try:
            if self._store is not None and b"client_keytab" in self._store:
                name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
                return gssapi.Credentials(name=name, usage="initiate", store=self._store)
            if self._store is not None:
                return gssapi.Credentials(usage="initiate", store=self._store)
            return gssapi.Credentials(usage="initiate")
        except Exception as exc:
            raise SaslError(explain(exc)) from None

    def _kinit(self) -> None:
        """Run the kinit command once; SaslError with its exit status and last line of output."""
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["/bin/sh", "-c", self._rendered],
                capture_output=True,
                text=True,
                timeout=KINIT_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SaslError(f"sasl.kerberos.kinit.cmd did not finish: {type(exc).__name__}") from None
        if done.returncode != 0:
            lines = (done.stderr or done.stdout or "").strip().splitlines()
            said = f": {lines[-1][:200]}" if lines else ""
            raise SaslError(f"sasl.kerberos.kinit.cmd failed with exit status {done.returncode}{said}")
        log.debug("sasl.kerberos.kinit.cmd succeeded in %.0f ms", (time.monotonic() - started) * 1000)

    def _renew(self) -> None:
        while not self._stop.wait(self._relogin):
            try:
                self._kinit()
            except SaslError as exc:
                log.error("Kerberos ticket refresh failed: %s", exc)

    def close(self) -> None:
        self._stop.set()

    def client(self, host: str, on_ready: Callable[[], None]) -> GssapiClient | None:
        """A conversation with the broker at ``host`` whose first token is made, or None: a worker
        thread is making one and calls ``on_ready()`` when it is there. Raises SaslError when
        making it failed (no credentials, unknown principal, KDC unreachable...)."""
        now = time.monotonic()
        with self._lock:
            made = self._made.get(host)
            while made:
                at, result = made.popleft()
                if now - at > FIRST_TOKEN_KEPT:
                    continue
                if isinstance(result, SaslError):
                    raise result
                return result
        threading.Thread(target=self._make_first, args=(host, on_ready), name="kafkawire-gssapi", daemon=True).start()
        return None

    def _make_first(self, host: str, on_ready: Callable[[], None]) -> None:
        result: GssapiClient | SaslError
        try:
            result = self.new_client(host)
        except SaslError as exc:
            result = exc
        with self._lock:
            self._made.setdefault(host, deque()).append((time.monotonic(), result))
        on_ready()

    def new_client(self, host: str) -> GssapiClient:
        """A conversation for ``<service>@<host>`` with its first token made (blocks on the KDC)."""
        gssapi = self._gssapi
        try:
            target = gssapi.Name(f"{self.service}@{host}", gssapi.NameType.hostbased_service)
        except Exception as exc:
            raise SaslError(explain(exc)) from None
        flags = gssapi.RequirementFlag.mutual_authentication | gssapi.RequirementFlag.integrity
        context = _Context(
            gssapi.SecurityContext(name=target, creds=self._credentials(), usage="initiate", flags=flags)
        )
        first = context.step(None)
        return GssapiClient(context, first or b"")

    def __repr__(self) -> str:
        return f"<KerberosLogin {self.principal!r} service {self.service!r}>"
