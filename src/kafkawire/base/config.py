"""Configuration as one table of options: names, aliases, types, ranges, defaults.

Values may be given as Python values or as strings (``"true"``, ``"100"``), as with librdkafka;
any other object counts as its ``str()`` (``group.id=uuid.uuid1()``), as confluent-kafka passes it.
Any mistake fails at construction with ``KafkaError._INVALID_ARG``, naming the key as written,
the value and what is allowed; a sensitive option's value never appears in an error or a log line.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..core.kafka_error import KafkaError, KafkaException

# What each kind accepts (every kind but callable and object as the value's str(), which is all
# librdkafka sees of it under confluent-kafka: a UUID, a Decimal, 5, True are "...", "5", "True"):
#   int, float  librdkafka's strtol/strtod of it (leading number read, the rest ignored), in range
#   bool        "true"/"false"/"t"/"f"/"1"/"0", any case (so True, False, 1, 0 too)
#   str         a string; None for "not set" (the default)
#   enum        one of ``choices``, case-insensitive, stored lower-case
#   callable    a Python callable, or None for "no callback"
#   list        a list/tuple, or a comma-separated string (split, blanks dropped); None: empty
#   object      anything; ``validate`` decides
# ``validate`` runs on the coerced value and returns the value to store; it raises ValueError
# with a message saying what is allowed. The caller prefixes the key and the value (hidden for
# a sensitive option, whose validate must therefore never quote what it was given).
KINDS = frozenset({"int", "float", "bool", "str", "enum", "callable", "list", "object"})


class Option:
    """One configuration property: its kind, default and checks. (A plain class: the dataclass
    cost about a millisecond of every client's start-up to create; options are made by the
    hundred at import, each by keyword.)"""

    __slots__ = (
        "aliases",
        "choices",
        "default",
        "high",
        "kind",
        "low",
        "name",
        "noop",
        "required",
        "sensitive",
        "strict",
        "validate",
    )

    def __init__(
        self,
        name: str,
        kind: str,
        default: Any,
        low: float | None = None,
        high: float | None = None,
        choices: tuple[str, ...] = (),
        aliases: tuple[str, ...] = (),
        sensitive: bool = False,
        validate: Callable[[Any], Any] | None = None,
        # Non-empty for options accepted only for compatibility: why the value has no effect here.
        noop: str = "",
        # A str option that has no "not set": None and "" are refused (librdkafka's validated strings).
        required: bool = False,
        # Set for the properties confluent-kafka's binding reads itself (callbacks, the report
        # filter): a value not of the kind (None too) raises this class, as its C code does.
        strict: type[Exception] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"option {name}: unknown kind {kind!r}")
        if kind == "object" and validate is None:
            raise ValueError(f"option {name}: kind 'object' needs a validate function")
        self.name = name
        self.kind = kind
        self.default = default
        self.low = low
        self.high = high
        self.choices = choices
        self.aliases = aliases
        self.sensitive = sensitive
        self.validate = validate
        self.noop = noop
        self.required = required
        self.strict = strict

    def __repr__(self) -> str:
        return f"Option({self.name!r}, {self.kind!r})"


def _int(name: str, default: int, low: int, high: int = 2**31 - 1, aliases: tuple[str, ...] = ()) -> Option:
    return Option(name, "int", default, low, high, aliases=aliases)


# security.protocol, ssl.* and sasl.* (librdkafka's names); cross-field checks, the TLS context and
# the SASL conversations are in security.py.
PROTOCOLS = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")


def _refused(why: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value:
            raise ValueError(why)
        return value

    return check


def _not_azure_imds(value: str) -> str:
    if value == "azure_imds":
        raise ValueError("not supported: OAUTHBEARER with Azure IMDS metadata is not implemented by kafkawire")
    return value


MAX_PROTOCOL_STRING = 32_767  # a protocol STRING's int16 length, in UTF-8 bytes


def _regex_list(patterns: list[str]) -> list[str]:
    """librdkafka's pattern list: regular expressions, each matched anywhere in a name."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {pattern!r}: {exc}") from None
    return patterns


def protocol_string(value: str | None) -> str | None:
    """A value sent in every request as a Kafka STRING (client.id, transactional.id, group.id):
    checked here, or each request would fail to encode later, on the IO thread, as timeouts."""
    if value is None:
        return None
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("expected text that encodes as UTF-8 (no lone surrogates)") from None
    if size > MAX_PROTOCOL_STRING:
        raise ValueError(f"expected at most {MAX_PROTOCOL_STRING} bytes as UTF-8, got {size}")
    return value


# The Java client's names of TLS versions (ssl.protocol, ssl.enabled.protocols), oldest first; its
# "TLS" means whatever the runtime allows. SSLv2/SSLv3 are not offered by Python's ssl module.
TLS_VERSIONS = ("TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")


def _tls_version(value: str | None) -> str | None:
    if value is not None and value != "TLS" and value not in TLS_VERSIONS:
        raise ValueError(f"expected one of TLS, {', '.join(TLS_VERSIONS)}")
    return value


def _tls_versions(value: list[str]) -> list[str]:
    if any(v not in TLS_VERSIONS for v in value):  # (empty: not set)
        raise ValueError(f"expected a list of {', '.join(TLS_VERSIONS)}")
    return value


def _str(name: str, *, sensitive: bool = False, aliases: tuple[str, ...] = ()) -> Option:
    return Option(name, "str", None, sensitive=sensitive, aliases=aliases)


SECURITY_OPTIONS: tuple[Option, ...] = (
    Option("security.protocol", "enum", "plaintext", choices=PROTOCOLS),
    _str("ssl.ca.location"),
    _str("ssl.ca.pem"),
    _str("ssl.certificate.location"),
    _str("ssl.certificate.pem"),
    _str("ssl.key.location"),
    _str("ssl.key.pem", sensitive=True),
    _str("ssl.key.password", sensitive=True),
    _str("ssl.keystore.location"),
    _str("ssl.keystore.password", sensitive=True),
    _str("ssl.truststore.location"),
    _str("ssl.truststore.password", sensitive=True),
    Option("ssl.truststore.type", "enum", "jks", choices=("jks", "pkcs12", "pem")),
    Option("ssl.endpoint.identification.algorithm", "enum", "https", choices=("https", "none")),
    Option("enable.ssl.certificate.verification", "bool", True),
    _str("ssl.cipher.suites"),
    Option("ssl.protocol", "str", None, validate=_tls_version),  # Java's: the newest version offered
    Option("ssl.enabled.protocols", "list", [], validate=_tls_versions),  # Java's: the versions allowed
    _str("ssl.crl.location"),
    Option(
        "ssl.providers",
        "str",
        None,
        validate=_refused("OpenSSL providers are not supported: kafkawire uses Python's ssl module"),
    ),
    Option(
        "sasl.mechanism",
        "str",
        "GSSAPI",
        aliases=("sasl.mechanisms",),
        validate=lambda v: v.strip().upper(),
        required=True,
    ),
    _str("sasl.username"),
    _str("sasl.password", sensitive=True),
    _str("sasl.jaas.config", sensitive=True),
    # sasl.mechanism=GSSAPI (Kerberos; kafkawire/security/kerberos.py).
    Option("sasl.kerberos.service.name", "str", "kafka"),
    Option("sasl.kerberos.principal", "str", "kafkaclient"),
    _str("sasl.kerberos.keytab"),
    # Unset: what librdkafka's default command does (a ticket from the keytab), done through GSS-API.
    _str("sasl.kerberos.kinit.cmd", sensitive=True),  # (a command may hold a password)
    _int("sasl.kerberos.min.time.before.relogin", 60_000, 0, 86_400_000),
    Option("oauth_cb", "callable", None, strict=TypeError),
    Option("sasl.oauthbearer.method", "enum", "default", choices=("default", "oidc")),
    _str("sasl.oauthbearer.config", sensitive=True),
    Option("enable.sasl.oauthbearer.unsecure.jwt", "bool", False),
    _str("sasl.oauthbearer.client.id", aliases=("sasl.oauthbearer.client.credentials.client.id",)),
    _str(
        "sasl.oauthbearer.client.secret", sensitive=True, aliases=("sasl.oauthbearer.client.credentials.client.secret",)
    ),
    _str("sasl.oauthbearer.token.endpoint.url"),
    _str("sasl.oauthbearer.scope"),
    _str("sasl.oauthbearer.extensions"),
    # aws_iam: tokens from AWS STS (kafkawire/_oauthbearer/aws, wired by security/settings.py).
    Option(
        "sasl.oauthbearer.metadata.authentication.type",
        "enum",
        "none",
        choices=("none", "azure_imds", "aws_iam"),
        validate=_not_azure_imds,
    ),
    # The JWT-bearer grant (RFC 7523) of method oidc: a signed assertion instead of a client secret.
    Option(
        "sasl.oauthbearer.grant.type",
        "enum",
        "client_credentials",
        choices=("client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
    ),
    Option("sasl.oauthbearer.assertion.algorithm", "enum", "rs256", choices=("rs256", "es256")),
    _str("sasl.oauthbearer.assertion.private.key.file"),
    _str("sasl.oauthbearer.assertion.private.key.passphrase", sensitive=True),
    _str("sasl.oauthbearer.assertion.private.key.pem", sensitive=True),
    _str("sasl.oauthbearer.assertion.file"),
    _str("sasl.oauthbearer.assertion.claim.aud"),
    _str("sasl.oauthbearer.assertion.claim.iss"),
    _str("sasl.oauthbearer.assertion.claim.sub"),
    _int("sasl.oauthbearer.assertion.claim.exp.seconds", 300, 1),
    _int("sasl.oauthbearer.assertion.claim.nbf.seconds", 60, 0),
    Option("sasl.oauthbearer.assertion.claim.jti.include", "bool", False),
    _str("sasl.oauthbearer.assertion.jwt.template.file"),
    _str("https.ca.location"),  # the CA of HTTPS endpoints (the OIDC token endpoint); else the system's
    _str("https.ca.pem"),
)


# How broker connections are resolved, made and kept (io/connection_settings.py reads them).
SOCKET_OPTIONS: tuple[Option, ...] = (
    _int("socket.send.buffer.bytes", 0, 0, 100_000_000),  # SO_SNDBUF; 0: the system's
    _int("socket.receive.buffer.bytes", 0, 0, 100_000_000),  # SO_RCVBUF; 0: the system's
    Option("socket.keepalive.enable", "bool", False),  # SO_KEEPALIVE
    Option("socket.nagle.disable", "bool", True),  # TCP_NODELAY
    Option("broker.address.family", "enum", "any", choices=("any", "v4", "v6")),
    # resolve_canonical_bootstrap_servers_only: each bootstrap name becomes the canonical names of
    # its addresses when the client is made (Kerberos wants the name the service principal has).
    Option(
        "client.dns.lookup",
        "enum",
        "use_all_dns_ips",
        choices=("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"),
    ),
    _int("broker.address.ttl", 1000, 0, 86_400_000),  # how long a host name's addresses are kept
    _int("connections.max.idle.ms", 0, 0, 2**31 - 1),  # 0: never close an idle connection
    Option("log.connection.close", "bool", True),  # log a broker closing a connection
)

CONNECTION_OPTIONS: tuple[Option, ...] = (
    Option("bootstrap.servers", "str", None, aliases=("metadata.broker.list",)),
    Option("client.id", "str", "kafkawire", validate=protocol_string),
    _int("socket.timeout.ms", 60_000, 10, 300_000),
    _int("socket.connection.setup.timeout.ms", 30_000, 1000),
    _int("reconnect.backoff.ms", 100, 0, 3_600_000),
    _int("reconnect.backoff.max.ms", 10_000, 0, 3_600_000),
    _int("receive.message.max.bytes", 100_000_000, 1000, 2_147_483_647),
    _int("max.in.flight.requests.per.connection", 1_000_000, 1, 1_000_000, aliases=("max.in.flight",)),
    _int("topic.metadata.refresh.interval.ms", 300_000, -1, 3_600_000),
    # While a leader or topic is unknown: the least time between two metadata requests.
    _int("topic.metadata.refresh.fast.interval.ms", 100, 1, 60_000),
    # True: the periodic refresh asks for the topics in use; false: for every topic of the cluster.
    Option("topic.metadata.refresh.sparse", "bool", True),
    # True: a broker is connected when a request needs it; false: every broker known is kept
    # connected (core/held_connections.py).
    Option("enable.sparse.connections", "bool", True),
    _int("metadata.max.age.ms", 900_000, 1, 86_400_000),
    # Topics the client acts as if they did not exist (list_topics() still shows them).
    Option("topic.blacklist", "list", [], validate=_regex_list),
    # When no known broker answers: start again from bootstrap.servers (KIP-899, KIP-1102).
    Option("metadata.recovery.strategy", "enum", "rebootstrap", choices=("none", "rebootstrap")),
    _int("metadata.recovery.rebootstrap.trigger.ms", 300_000, 0),
    _int("api.version.request.timeout.ms", 10_000, 1, 300_000),
    # What ApiVersions tells a broker this client is (KIP-511); unset: kafkawire and its version.
    _str("client.software.name"),
    _str("client.software.version"),
    # librdkafka's in-client mock cluster (kafkawire.testing): bootstrap.servers is then ignored.
    _int("test.mock.num.brokers", 0, 0, 10_000),
    _int("test.mock.broker.rtt", 0, 0, 3_600_000),
    *SECURITY_OPTIONS,
    *SOCKET_OPTIONS,
)

# Every client backs off retries (and the metadata owner failed refreshes) by these.
RETRY_BACKOFF_OPTIONS: tuple[Option, ...] = (
    _int("retry.backoff.ms", 100, 1, 300_000),
    _int("retry.backoff.max.ms", 1000, 1, 300_000),
)


def config_error(message: str) -> KafkaException:
    return KafkaException(KafkaError(KafkaError._INVALID_ARG, message))


def _number(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else str(x)


def allowed(opt: Option) -> str:
    """What ``opt`` accepts, in words, for error messages."""
    if opt.kind in ("int", "float"):
        return f"allowed range is {_number(opt.low)}..{_number(opt.high)}"
    if opt.kind == "bool":
        return "expected true or false"
    if opt.kind == "enum":
        return "allowed values are " + ", ".join(opt.choices)
    if opt.kind == "callable":
        return "expected a callable (or None)"
    return "expected a string"


_TRUE = frozenset({"true", "t", "1"})
_FALSE = frozenset({"false", "f", "0"})
# A value is what confluent-kafka hands librdkafka: its str() (True is "True", 1.5 is "1.5", b"x" is
# "b'x'"), or NULL for None. Lists stay lists (kafkawire also takes a list for a list property).
_KEPT = (str, list, tuple, type(None))
_C_SPACE = " \t\n\v\f\r"
# The longest prefix strtol(s, &end, 0) reads: sign, then hex (0x...), octal (0...) or decimal.
_STRTOL = r"([+-]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))"
# The longest prefix strtod reads: decimal or hex, with exponent; inf, infinity, nan.
_STRTOD = (
    r"(?i)[+-]?(?:inf(?:inity)?|nan(?:\([0-9a-z_]*\))?"
    r"|0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)"
)
_LONG = 2**63


def _text(value: Any) -> Any:
    return value if isinstance(value, _KEPT) else str(value)


def _coerce(opt: Option, value: Any, key: str | None = None, *, given: bool = True) -> Any:
    """The typed value of ``opt`` given as ``value`` under ``key`` (an alias or the name): what
    librdkafka's rd_kafka_conf_set() makes of the text confluent-kafka gives it, so a value one
    client takes the other takes too."""
    key = key or opt.name
    if given and opt.strict is not None and opt.strict is not KafkaException:
        if opt.kind == "bool" and not isinstance(value, bool):
            raise opt.strict(f"Expected {key} to be bool type, not {type(value).__name__}")
        if opt.kind == "callable" and not callable(value):
            raise opt.strict(f"expected {key} property as a callable function")
    if opt.kind not in ("callable", "object"):
        value = _text(value)
    shown = HIDDEN if opt.sensitive else value if isinstance(value, str) and value.strip() else repr(value)

    def bad(detail: str) -> KafkaException:
        # librdkafka's wording: 'Invalid value for configuration property "partitioner": murmur'.
        return config_error(f'Invalid value for configuration property "{key}": {shown} ({detail})')

    coerced: Any
    numeric = {"int": "expected an integer; ", "float": "expected a number; "}.get(opt.kind, "")
    if opt.kind in ("bool", "int", "float", "enum") and not isinstance(value, str):
        raise bad(numeric + allowed(opt))  # None (librdkafka's NULL) or a list: no value for these kinds
    if opt.kind == "bool":
        if value.lower() not in _TRUE | _FALSE:
            raise bad(allowed(opt))
        coerced = value.lower() in _TRUE
    elif opt.kind in ("int", "float"):
        coerced = c_int(value) if opt.kind == "int" else c_float(value)
        if coerced is None:
            raise bad(numeric + allowed(opt))
        if (opt.low is not None and coerced < opt.low) or (opt.high is not None and coerced > opt.high):
            raise bad(allowed(opt))
    elif opt.kind == "callable":
        if (value is not None or (given and opt.strict is not None)) and not callable(value):
            raise bad(allowed(opt))
        coerced = value
    elif opt.kind == "list":
        if isinstance(value, str):
            coerced = [item.strip() for item in value.split(",") if item.strip()]
        elif isinstance(value, (list, tuple)):
            coerced = list(value)
        else:
            coerced = []  # None: librdkafka's NULL, the empty list
    elif opt.kind == "object":
        coerced = value
    elif opt.required and not value:
        raise bad("expected a non-empty string")
    elif value is None:
        coerced = opt.default  # None sets a str option back to its default, as librdkafka's NULL
    else:
        text = value if isinstance(value, str) else str(value)  # (a list: its str(), as confluent-kafka)
        coerced = text.lstrip(_C_SPACE).lower() if opt.kind == "enum" else text
        if opt.kind == "enum" and coerced not in opt.choices:
            raise bad(allowed(opt))
    if opt.validate is not None:
        try:
            coerced = opt.validate(coerced)
        except ValueError as exc:
            raise bad(str(exc)) from None
    return coerced


def c_int(text: str) -> int | None:
    """librdkafka's int: C's strtol(text, &end, 0) cast to a 32-bit int; None if no digit was read.
    Like librdkafka it ignores what follows the number ("5ms" is 5, "1.5" is 1) and wraps past
    2**31 (2**32 is 0)."""
    found = re.match(_STRTOL, text.lstrip(_C_SPACE))
    if found is None:
        return None
    sign, hexa, octal, decimal = found.groups()
    number = int(hexa, 16) if hexa else int(octal, 8) if octal else int(decimal)
    number = max(-_LONG, min(_LONG - 1, -number if sign == "-" else number))  # strtol saturates
    return (number + 2**31) % 2**32 - 2**31


def c_float(text: str) -> float | None:
    """librdkafka's float: C's strtod, which also ignores what follows the number; NaN is refused
    (librdkafka's range check cannot see it, and no timer can use it)."""
    found = re.match(_STRTOD, text.lstrip(_C_SPACE))
    if found is None:
        return None
    number = found.group(0)
    head = number.lstrip("+-").lower()
    if head.startswith("0x"):
        value = float.fromhex(number)
    elif head.startswith("nan"):
        return None
    else:
        value = float(number)
    return value


def option_index(options: Iterable[Option]) -> dict[str, Option]:
    """Every accepted key (names and aliases) -> its option."""
    by_key: dict[str, Option] = {}
    for opt in options:
        by_key[opt.name] = opt
        for alias in opt.aliases:
            by_key[alias] = opt
    return by_key


def unknown_key_error(key: str, known: Iterable[str]) -> KafkaException:
    """The unknown-key error, suggesting the nearest known name when one is close (a typo)."""
    import difflib  # (only a mistyped key pays for it)

    near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    hint = f' (did you mean "{near[0]}"?)' if near else ""
    return config_error(f'No such configuration property: "{key}"{hint}')


def expand_default_topic_config(conf: Mapping[str, Any]) -> Mapping[str, Any]:
    """The deprecated ``default.topic.config`` dict merged into the top level where it stands: its
    keys apply in order with the others (a later key wins), as confluent-kafka applies them."""
    if "default.topic.config" not in conf:
        return conf
    out: dict[str, Any] = {}
    for key, value in conf.items():
        if key != "default.topic.config":
            out[key] = value
            continue
        if not isinstance(value, Mapping):
            raise config_error('Invalid value for configuration property "default.topic.config": expected a dict')
        for topic_key, topic_value in value.items():
            out.pop(topic_key, None)  # keep the order in which keys were applied
            out[topic_key] = topic_value
    return out


class Options(dict[str, Any]):
    """Effective option values by canonical name. The values of sensitive options (passwords,
    keys, JAAS and OAuth secrets) are shown as "(hidden)" by repr() and str() and left out of a
    pickle, so that a traceback with locals, a debugger or a log of ``vars()`` never shows them;
    copy.copy/deepcopy keep them (a copy is still a configuration)."""

    __slots__ = ("_hidden",)

    def __init__(self, values: Mapping[str, Any], hidden: frozenset[str]) -> None:
        super().__init__(values)
        self._hidden = hidden

    def _shown(self) -> dict[str, Any]:
        return {k: HIDDEN if k in self._hidden and v is not None else v for k, v in self.items()}

    def __repr__(self) -> str:
        return repr(self._shown())

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._shown(),))

    def __copy__(self) -> Options:
        return Options(self, self._hidden)

    def __deepcopy__(self, memo: dict[int, Any]) -> Options:
        return Options(copy.deepcopy(dict(self), memo), self._hidden)


HIDDEN = "(hidden)"


def given_config(config: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A client's configuration as confluent-kafka's clients take it: a dict, keyword arguments
    (librdkafka's names, dots and all: ``Consumer(**conf)``), or both, the keywords winning;
    anything else is a TypeError in its words."""
    if config is None:
        if not kwargs:
            raise TypeError("expected configuration dict")
        return dict(kwargs)
    if not isinstance(config, Mapping):
        raise TypeError(f"expected configuration dict, not {type(config).__name__}")
    return {**config, **kwargs}


def parse_config(conf: Mapping[str, Any], options: Iterable[Option], *, ignore_unknown: bool = False) -> Options:
    """Canonical name -> typed value for every option (defaults filled in).

    ``ignore_unknown`` lets a layer read just its own options out of a larger configuration.
    """
    by_key = option_index(options)
    if not isinstance(conf, Mapping):
        raise TypeError(f"expected configuration dict, not {type(conf).__name__}")
    conf = expand_default_topic_config(conf)
    out = {opt.name: opt.default for opt in by_key.values()}
    given = set()
    for key, value in conf.items():
        if not isinstance(key, str):
            raise TypeError(f"configuration keys must be strings, not {type(key).__name__}")
        known = by_key.get(key)
        if known is None:
            if ignore_unknown:
                continue
            raise unknown_key_error(key, by_key)
        out[known.name] = _coerce(known, value, key, given=not isinstance(conf, Options))  # (parsed: typed)
        given.add(known.name)
    _derive_defaults(out, given)
    return Options(out, frozenset(opt.name for opt in by_key.values() if opt.sensitive))


def _derive_defaults(out: dict[str, Any], given: set[str]) -> None:
    """The defaults librdkafka derives from another option when they are not set (as rd_kafka_new
    finalizes its configuration): metadata.max.age.ms is three topic.metadata.refresh.interval.ms."""
    interval = out.get("topic.metadata.refresh.interval.ms")
    if "metadata.max.age.ms" in out and "metadata.max.age.ms" not in given and interval is not None and interval > 0:
        out["metadata.max.age.ms"] = 3 * interval


def bootstrap_addresses(value: str | None) -> list[tuple[str, int]]:
    """``"host1:9092,host2"`` -> [(host, port)], 9092 where no port is given (as librdkafka).

    No servers at all is allowed, as in confluent-kafka: the client warns once (`NO_BOOTSTRAP`)
    and its requests fail with ``_TRANSPORT``; a malformed entry is a config error.
    """
    out: list[tuple[str, int]] = []
    for item in (value or "").split(","):
        item = item.strip()
        if not item:
            continue
        scheme, sep, rest = item.partition("://")
        if sep:
            if scheme.lower() not in _BOOTSTRAP_SCHEMES:
                raise config_error(f'Invalid "bootstrap.servers" entry {item!r}: unknown scheme {scheme!r}')
            item = rest
        host, port = _host_port(item)
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise config_error(f'Invalid "bootstrap.servers" entry {item!r}: expected host[:port]')
        out.append((host, int(port)))
    return out


NO_BOOTSTRAP = 'No "bootstrap.servers" configured: the client will not connect to any broker'
_BOOTSTRAP_SCHEMES = ("plaintext", "ssl", "sasl_plaintext", "sasl_ssl")


def _host_port(item: str) -> tuple[str, str]:
    """``host:port``, ``host``, ``[v6]:port``, ``[v6]``; a bare IPv6 address needs brackets for a port."""
    if item.startswith("["):
        host, _, rest = item[1:].partition("]")
        return host, rest[1:] if rest.startswith(":") else ("9092" if not rest else "x")
    if item.count(":") == 1:
        host, _, port = item.partition(":")
        return host, port
    return item, "9092"
