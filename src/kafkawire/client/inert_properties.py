"""The librdkafka properties a client accepts without implementing them, each with why.

Every property librdkafka documents (`librdkafka_properties`) is accepted by every client, so that
a configuration written for confluent-kafka starts unchanged. Those a client implements are in its
own option table; the rest are here, in three kinds:

- ``NO_EFFECT``: meaningless in a Python client (a C API's knob, a deprecated or read-only property,
  a setting of a feature that only exists with another value refused below); checked, then unused.
- ``ONLY_VALUES``: a value selects something kafkawire does not implement (Kerberos, OpenSSL
  engines, librdkafka plugins): the values kafkawire's behaviour matches are accepted, any other
  fails construction saying so.
- librdkafka's C API slots (kind ``api``: ``socket_cb``, ``dr_msg_cb``...), which confluent-kafka
  refuses as configuration too: refused naming the Python way, where there is one.

docs/compatibility.md's table "librdkafka properties kafkawire accepts without effect" is `readme_table()`'s
output over every client's table (tests/unit/client/test_librdkafka_properties.py holds them equal).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..base.config import Option, option_index
from .librdkafka_properties import PROPERTIES
from .options import ADMIN, catalog_option

_FILE_STORE = "used only by the deprecated file offset store (offset.store.method=file), which kafkawire refuses"

NO_EFFECT: dict[str, str] = {
    "builtin.features": "read-only in librdkafka: the features of its build",
    "message.copy.max.bytes": "a C buffer-copy threshold: kafkawire copies each record into its batch once",
    "topic.metadata.refresh.fast.cnt": "deprecated, no longer used by librdkafka",
    "socket.blocking.max.ms": "deprecated, no longer used by librdkafka",
    "reconnect.backoff.jitter.ms": "deprecated, no longer used by librdkafka (reconnect.backoff.ms jitters)",
    "enabled_events": "a mask for librdkafka's C event API; Python callbacks are served by poll()",
    "log.queue": "librdkafka's C log queue; kafkawire logs through the logging module (the logger option)",
    "enable.random.seed": "seeds C's rand(); Python's random module seeds itself",
    "internal.termination.signal": "a signal that wakes librdkafka's C threads; kafkawire's IO thread wakes on an eventfd (a socket pair where there is none)",
    "ssl.ca.certificate.stores": "Windows certificate stores: without ssl.ca.location, kafkawire loads the system's "
    "default CAs (Python's load_default_certs, which reads Windows' ROOT and CA stores)",
    "ssl.engine.id": "names the OpenSSL engine of ssl.engine.location, which kafkawire refuses",
    "offset.store.path": _FILE_STORE,
    "offset.store.sync.interval.ms": _FILE_STORE,
    "consume.callback.max.messages": "bounds librdkafka's C rd_kafka_consume_callback(), which Python has no access to",
    "share.acknowledgement.mode": "a share consumer's setting (KIP-932), not Consumer's",
    "produce.offset.report": "deprecated, no longer used by librdkafka (offsets are always reported)",
    "metadata.request.timeout.ms": "deprecated and hidden, no longer used by librdkafka",
    "enable_sasl_queue": "a C API knob (rd_kafka_conf_enable_sasl_queue) choosing the queue that serves "
    "librdkafka's token refresh; kafkawire renews an oauth_cb token on a thread of its own",
    "ut_handle_ProduceResponse": "a hook of librdkafka's own unit tests (a C function pointer)",
    # Not implemented (yet); what kafkawire does instead.
    "topic.metadata.propagation.max.ms": "(consumer, admin) only the producer waits for a topic to propagate",
    # Properties librdkafka gives every client type that mean nothing to some of them.
    "client.rack": "(producer, admin) only a consumer fetches from its rack's replica (KIP-392)",
    "message.max.bytes": "(admin) the admin client sends no records",
}

# name -> (the values accepted, as their text; why any other value is refused)
ONLY_VALUES: dict[str, tuple[tuple[str, ...], str]] = {
    "ssl.engine.location": (("",), "OpenSSL engines are not supported: kafkawire uses Python's ssl module"),
    "ssl.curves.list": (("",), "Python's ssl module cannot set the TLS supported-curves list"),
    "ssl.sigalgs.list": (("",), "Python's ssl module cannot set the TLS signature algorithms"),
    "plugin.library.paths": (("",), "librdkafka plugins are C libraries for librdkafka; kafkawire loads none"),
    "socket.max.fails": (("1",), "kafkawire closes a connection at its first timed-out request, always"),
    "sasl.oauthbearer.sub.claim.name": (("sub",), "kafkawire takes an OIDC token's principal from its sub claim"),
    "offset.store.method": (
        ("broker",),
        "the deprecated file offset store is not implemented: offsets go to the broker",
    ),
    "group.protocol.type": (("consumer",), "a classic group's protocol type is consumer, as librdkafka supports"),
    "queuing.strategy": (("fifo",), "the deprecated lifo queuing is not implemented: records go in produce() order"),
}


def _only(values: tuple[str, ...], why: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
        if text not in values:
            raise ValueError(f"not supported: {why}")
        return value

    return check


def unimplemented(own: Iterable[Option], role: str) -> tuple[Option, ...]:
    """Options for the librdkafka properties of ``role`` (and of every client) not in ``own``: each
    checked as librdkafka checks it, plus ONLY_VALUES' limits; C API slots refused. A property in
    none of the tables is left out, so a new librdkafka version's property is refused until listed."""
    have = option_index(own)
    out: list[Option] = []
    for name, scope, kind, rng, _default, target in PROPERTIES:
        if name in have or scope not in ("*", role) or (role == ADMIN and scope != "*"):
            continue
        base = catalog_option(name, kind, rng, target)
        if kind == "api":
            out.append(base)
        elif name in ONLY_VALUES:
            values, why = ONLY_VALUES[name]
            out.append(Option(name, base.kind, None, base.low, base.high, base.choices, validate=_only(values, why)))
        elif name in NO_EFFECT:
            out.append(
                Option(
                    name,
                    base.kind,
                    None,
                    base.low,
                    base.high,
                    base.choices,
                    validate=base.validate,
                    noop=NO_EFFECT[name],
                )
            )
    return tuple(out)


def readme_table(options: Iterable[Option]) -> str:
    """docs/compatibility.md's markdown table: the properties accepted without effect (``options`` with a noop
    reason, and NO_EFFECT), then those accepted only at some values (ONLY_VALUES), with why."""
    reasons = {opt.name: opt.noop for opt in options if opt.noop} | NO_EFFECT
    rows = [f"| `{name}` | any | {why} |" for name, why in sorted(reasons.items())]
    rows += [
        f"| `{name}` | {', '.join(f'`{v}`' if v else 'empty' for v in values)} | {why} |"
        for name, (values, why) in sorted(ONLY_VALUES.items())
    ]
    return "\n".join(
        [
            "| property | values accepted | why it has no effect, or why other values are refused |",
            "|---|---|---|",
            *rows,
        ]
    )
