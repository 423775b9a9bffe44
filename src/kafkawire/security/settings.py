"""Security settings of every client: ``security.protocol``, ``ssl.*`` and ``sasl.*`` as librdkafka
names them, checked at construction, and what a connection needs from them.

`SecuritySettings` is built once per client: the TLS context (files read and keys decrypted at
construction, so a wrong path or password fails there, naming the key) and a factory of SASL
conversations (`core/sasl.py`). Credentials live only here and in the conversations: they never
appear in an error, a log line, a repr or the statistics (the options are ``sensitive``).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..base.config import config_error
from ..core import sasl
from ..core.kafka_error import KafkaError, KafkaException

if TYPE_CHECKING:
    import ssl

    from .kerberos import KerberosLogin
    from .oidc import OidcTokenSource
    from .token_renewer import TokenRenewer

log = logging.getLogger("kafkawire.security.settings")

# After a failed oauth_cb renewal the next attempt comes this many seconds later (librdkafka's 10 s).
RETRY_AFTER = 10.0

Bearer = tuple[str, dict[str, str]]  # an OAUTHBEARER token and its SASL extensions


def _mechanism(value: str) -> str:
    upper = value.strip().upper()
    if upper not in sasl.MECHANISMS:
        raise ValueError(f"supported mechanisms are {', '.join(sasl.MECHANISMS)}")
    return upper


class SecuritySettings:
    """What connections need: ``tls`` (an SSLContext or None) and ``sasl_client(now)``."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.protocol: str = config["security.protocol"]
        self.tls: ssl.SSLContext | None = None
        self.mechanism: str | None = None
        self._lock = threading.Lock()  # set_sasl_credentials may run on any thread
        self._username: str | None = config["sasl.username"]
        self._password: str | None = config["sasl.password"]
        self._oauth_cb: Callable[..., Any] | None = _aws_iam_oauth_cb(config) or config["oauth_cb"]
        self._oauth_config: str | None = config["sasl.oauthbearer.config"]
        self._bearer: TokenRenewer[Bearer] | None = None  # oauth_cb's tokens, or unsecured JWTs
        self._oidc: OidcTokenSource | None = None
        self._kerberos: KerberosLogin | None = None
        self._krb5_login_module: dict[str, str] | None = None  # sasl.jaas.config's Krb5LoginModule options
        if self.protocol in ("ssl", "sasl_ssl"):
            from .tls_context import tls_context  # ssl option checks live with the context they build

            try:
                self.tls = tls_context(config)
            except ValueError as exc:
                raise config_error(f"Invalid TLS configuration: {exc}") from None
        if self.protocol.startswith("sasl_"):
            self._sasl_settings(config)

    def _sasl_settings(self, config: Mapping[str, Any]) -> None:
        jaas = config["sasl.jaas.config"]
        mechanism = config["sasl.mechanism"]
        if jaas:
            try:
                family, options = sasl.parse_jaas_config(jaas)
            except ValueError as exc:
                raise config_error(
                    f'Invalid value (hidden) for configuration property "sasl.jaas.config": {exc}'
                ) from None
            self._username = options.get("username", self._username)
            self._password = options.get("password", self._password)
            if family == "PLAIN" and mechanism == "GSSAPI":
                mechanism = "PLAIN"
            if family == "GSSAPI":
                self._krb5_login_module = options
        try:
            self.mechanism = _mechanism(mechanism)
        except ValueError as exc:
            raise config_error(
                f'Invalid value {mechanism!r} for configuration property "sasl.mechanism": {exc}'
            ) from None
        if self.mechanism == "GSSAPI":
            self._kerberos_settings(config)
        elif self.mechanism == "OAUTHBEARER":
            # (imported here: only OAUTHBEARER clients pay for the token machinery and its HTTP client)
            from .oidc import OidcTokenSource
            from .token_renewer import TokenRenewer

            # AWS IAM's tokens come from its provider, the oauth_cb (_aws_iam_oauth_cb).
            if config["sasl.oauthbearer.method"] == "oidc" and config.get(_AWS_IAM_KEY) != "aws_iam":
                try:
                    self._oidc = OidcTokenSource(config)
                except ValueError as exc:
                    raise config_error(f"sasl.oauthbearer.method=oidc: {exc}") from None
                return
            if self._oauth_cb is None and not config["enable.sasl.oauthbearer.unsecure.jwt"]:
                raise config_error(
                    'OAUTHBEARER needs "oauth_cb", or "enable.sasl.oauthbearer.unsecure.jwt" with '
                    '"sasl.oauthbearer.config" (unsigned tokens, for test clusters)'
                )
            if self._oauth_cb is not None:
                # As librdkafka: the first token while the client is built; renewed on a thread of
                # its own from start() on (never on the IO thread: the callback may block).
                self._bearer = TokenRenewer(
                    functools.partial(_ask_oauth_cb, self._oauth_cb, self._oauth_config), "kafkawire-oauth_cb"
                )
                try:
                    self._bearer.current(time.time())
                except Exception as exc:
                    why = f"oauth_cb failed to give the first OAUTHBEARER token: {type(exc).__name__}: {exc}"
                    raise KafkaException(KafkaError(KafkaError._AUTHENTICATION, why)) from None
            else:
                try:
                    sasl.unsecured_jwt(self._oauth_config or "", time.time())
                except ValueError as exc:
                    raise config_error(
                        f'Invalid value (hidden) for configuration property "sasl.oauthbearer.config": {exc}'
                    ) from None
                self._bearer = TokenRenewer(functools.partial(_unsecured_jwt, self._oauth_config or ""))
        elif not self._username or self._password is None:
            raise config_error(f'sasl.mechanism {self.mechanism} needs "sasl.username" and "sasl.password"')

    def _kerberos_settings(self, config: Mapping[str, Any]) -> None:
        from .kerberos import KerberosLogin  # the optional gssapi package is imported by GSSAPI users only

        try:
            self._kerberos = KerberosLogin(config, self._krb5_login_module)
        except ImportError as exc:
            raise config_error(f'sasl.mechanism "GSSAPI": {exc}') from None
        except ValueError as exc:
            raise config_error(str(exc)) from None
        except sasl.SaslError as exc:
            raise KafkaException(KafkaError(KafkaError._AUTHENTICATION, f"SASL GSSAPI: {exc}")) from None

    @property
    def uses_sasl(self) -> bool:
        return self.mechanism is not None

    def start(self, on_error: Callable[[KafkaError], None]) -> None:
        """Renew oauth_cb's token in the background from now on; ``on_error`` (any thread) hears of a
        failed renewal, tried again RETRY_AFTER seconds later (connections keep the token in hand
        until it expires, then ask the callback themselves)."""

        def failed(exc: Exception) -> None:
            why = f"Failed to acquire SASL OAUTHBEARER token: {type(exc).__name__}: {exc}"
            log.warning("%s (retrying in %.0f s)", why, RETRY_AFTER)
            on_error(KafkaError(KafkaError._AUTHENTICATION, why))

        if self._bearer is not None and self._oauth_cb is not None:
            self._bearer.renew_ahead(failed, RETRY_AFTER)

    def close(self) -> None:
        if self._bearer is not None:
            self._bearer.close()
        if self._kerberos is not None:
            self._kerberos.close()

    def set_credentials(self, username: str, password: str) -> None:
        """confluent-kafka's ``set_sasl_credentials``: used from the next authentication on."""
        if not isinstance(username, str) or not isinstance(password, str):
            raise TypeError("username and password must be str")
        with self._lock:
            self._username, self._password = username, password

    def sasl_client(self, now: float, on_ready: Callable[[], None], host: str = "") -> sasl.SaslClient | None:
        """A new conversation for one connection's authentication (``now``: wall-clock seconds) with
        the broker at ``host`` (as given in bootstrap.servers or advertised: Kerberos names the
        service by it).

        None: an OIDC token is being fetched, or a Kerberos first token made; ``on_ready()`` (from
        another thread) says to ask again. Raises SaslError when Kerberos failed."""
        if self._kerberos is not None:
            return self._kerberos.client(host, on_ready)
        if self._oidc is not None:
            token = self._oidc.token(now, on_ready)
            return None if token is None else sasl.OAuthBearerClient(token, self._oidc.extensions)
        with self._lock:
            if self.mechanism == "PLAIN":
                return sasl.PlainClient(self._username or "", self._password or "")
            if self.mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                return sasl.ScramClient(self.mechanism, self._username or "", self._password or "")
        assert self._bearer is not None
        token, extensions = self._bearer.current(now)
        return sasl.OAuthBearerClient(token, extensions)

    def __repr__(self) -> str:
        return f"SecuritySettings(protocol={self.protocol!r}, mechanism={self.mechanism!r})"


def _aws_iam_oauth_cb(config: Mapping[str, Any]) -> Callable[..., Any] | None:
    """The AWS IAM token provider's ``oauth_cb`` when the configuration selects it
    (``sasl.oauthbearer.metadata.authentication.type=aws_iam``, with ``sasl.oauthbearer.method=oidc``
    and the provider's ``sasl.oauthbearer.config``) and gives no ``oauth_cb`` of its own, as
    confluent-kafka wires it: checked whatever the security protocol, with its errors
    (ValueError, ImportError naming the extra to install)."""
    if config["oauth_cb"] is not None or config.get(_AWS_IAM_KEY) != "aws_iam":
        return None
    method = config["sasl.oauthbearer.method"]
    if method != "oidc":
        raise ValueError(
            f"'{_AWS_IAM_KEY}=aws_iam' requires 'sasl.oauthbearer.method=oidc'. Current value: '{method}'. "
            "method=oidc is mandatory for the AWS IAM authentication path."
        )
    if not config["sasl.oauthbearer.config"]:
        raise ValueError(
            f"'{_AWS_IAM_KEY}=aws_iam' is set but 'sasl.oauthbearer.config' is missing or empty. The AWS IAM "
            "autowire path requires region and audience to be supplied via sasl.oauthbearer.config "
            '(e.g. "region=us-east-1,audience=https://...").'
        )
    try:
        from .._oauthbearer.aws import aws_autowire  # boto3, imported by the users of AWS IAM alone
    except ImportError:
        raise ImportError(
            f"Config '{_AWS_IAM_KEY}=aws_iam' requires the optional 'oauthbearer-aws' extra. Install with:\n"
            "    pip install 'kafkawire[oauthbearer-aws]'"
        ) from None
    return aws_autowire.create_handler(config["sasl.oauthbearer.config"], config["sasl.oauthbearer.extensions"])


_AWS_IAM_KEY = "sasl.oauthbearer.metadata.authentication.type"


def _ask_oauth_cb(oauth_cb: Callable[..., Any], argument: str | None, now: float) -> tuple[Bearer, float]:
    token, expiry, extensions = _from_oauth_cb(oauth_cb(argument))
    if expiry <= now:
        raise sasl.SaslError("oauth_cb returned a token that has already expired")
    return (token, extensions), expiry


def _unsecured_jwt(config: str, now: float) -> tuple[Bearer, float]:
    token, expiry, _principal, extensions = sasl.unsecured_jwt(config, now)
    return (token, extensions), expiry


def _from_oauth_cb(result: Any) -> tuple[str, float, dict[str, str]]:
    """confluent-kafka's oauth_cb result: ``(token, expiry)`` or ``(token, expiry, principal[, extensions])``."""
    if not isinstance(result, tuple) or not 2 <= len(result) <= 4:
        raise sasl.SaslError("oauth_cb must return (token, expiry_seconds[, principal[, extensions]])")
    token, expiry = result[0], result[1]
    extensions = result[3] if len(result) == 4 and result[3] else {}
    if not isinstance(token, str) or not isinstance(expiry, (int, float)) or not isinstance(extensions, dict):
        raise sasl.SaslError("oauth_cb returned a token that is not a str, or an expiry that is not a number")
    return token, float(expiry), {str(k): str(v) for k, v in extensions.items()}
