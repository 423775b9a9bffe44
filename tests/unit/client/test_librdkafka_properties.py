"""The librdkafka property catalog against the librdkafka installed with confluent-kafka: a new
librdkafka version that adds, drops or changes a property fails here until the table is generated
again (scripts/generate_librdkafka_properties.py). And each client type's treatment of another's
property, as librdkafka's: checked, then ignored with a warning."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any

import pytest

from kafkawire import KafkaError, KafkaException
from kafkawire.client.librdkafka_properties import LIBRDKAFKA_VERSION, PROPERTIES
from kafkawire.client.options import CONSUMER, PRODUCER, foreign_keys

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "generate_librdkafka_properties.py"


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("generate_librdkafka_properties", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_catalog_is_the_installed_librdkafkas() -> None:
    generator = _generator()
    version, table = generator.librdkafka_version_and_table()
    assert version == LIBRDKAFKA_VERSION, "run scripts/generate_librdkafka_properties.py"
    assert tuple(generator.parse(table)) == PROPERTIES[: -len(generator.HIDDEN)]
    assert tuple(generator.catalog()[1]) == PROPERTIES  # (the hidden rows checked against the library)


def test_every_property_has_a_client_type_and_a_known_kind() -> None:
    names = {row[0] for row in PROPERTIES}
    assert len(names) == len(PROPERTIES) > 150
    for name, scope, kind, _rng, _default, alias in PROPERTIES:
        assert scope in ("*", "P", "C"), name
        assert kind in ("int", "float", "bool", "enum", "str", "list", "api"), name
        assert not alias or alias in names, name


def test_another_client_types_property_is_checked_and_set_aside() -> None:
    assert foreign_keys({"linger.ms": 5, "acks": "all", "group.id": "g"}, {}, CONSUMER) == {
        "linger.ms": 5,
        "acks": "all",
    }
    assert foreign_keys({"enable.auto.commit": "false", "acks": 1}, {}, PRODUCER) == {"enable.auto.commit": "false"}
    with pytest.raises(KafkaException) as e:
        foreign_keys({"session.timeout.ms": "soon"}, {}, PRODUCER)
    assert e.value.args[0].code() == KafkaError._INVALID_ARG and "session.timeout.ms" in e.value.args[0].str()


def test_one_dict_serves_all_three_clients(caplog: pytest.LogCaptureFixture) -> None:
    import kafkawire
    from kafkawire.admin import AdminClient

    conf = {
        "bootstrap.servers": "127.0.0.1:1",
        "group.id": "g",
        "enable.auto.commit": False,
        "enable.idempotence": True,
        "transactional.id": "t",
        "linger.ms": 5,
    }
    with caplog.at_level(logging.WARNING, logger="kafkawire"):
        kafkawire.Producer(conf).close()
        kafkawire.Consumer(conf).close()
    text = caplog.text
    assert "group.id is a consumer property and will be ignored by this producer instance" in text
    assert "linger.ms is a producer property and will be ignored by this consumer instance" in text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="kafkawire"):
        AdminClient(conf)
    ours = sorted(_ignored_lines(caplog.text))
    assert ours == [
        "Configuration property enable.auto.commit is a consumer property and will be ignored by this producer instance",
        "Configuration property group.id is a consumer property and will be ignored by this producer instance",
    ]  # an admin client is a producer handle: its properties pass silently


def _ignored_lines(text: str) -> list[str]:
    """The "will be ignored" warnings in ``text``, from "Configuration property" on."""
    return [line[line.index("Configuration property") :] for line in text.splitlines() if "will be ignored" in line]


def test_the_admin_clients_warnings_are_librdkafkas() -> None:
    """Judged by confluent-kafka's AdminClient given the same dict: the same warnings, word for word."""
    import confluent_kafka.admin

    import kafkawire.admin

    conf = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g", "enable.auto.commit": False, "linger.ms": 5}
    seen: dict[str, list[str]] = {}
    for module in (confluent_kafka.admin, kafkawire.admin):
        lines = seen.setdefault(module.__name__, [])
        logger = logging.getLogger(f"judge.{module.__name__}")
        logger.addHandler(_Collect(lines))
        logger.setLevel(logging.WARNING)
        admin = module.AdminClient({**conf, "logger": logger})  # type: ignore[attr-defined]
        admin.poll(0.5)  # librdkafka's lines reach the logger from poll()
    theirs = sorted(_ignored_lines("\n".join(seen["confluent_kafka.admin"])))
    assert len(theirs) == 2 and sorted(_ignored_lines("\n".join(seen["kafkawire.admin"]))) == theirs


class _Collect(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


# --- every client's table against the catalog ------------------------------------------------

ROOT = Path(__file__).resolve().parents[3]
CLIENTS = ("producer", "consumer", "admin")


def _make(kind: str, conf: dict[str, Any], module: Any) -> None:
    """Build (and close) one client of ``kind`` from ``module`` (kafkawire or confluent_kafka)."""
    full = {"bootstrap.servers": "127.0.0.1:1", **conf}
    if kind == "producer":
        client = module.Producer(full)
    elif kind == "consumer":
        client = module.Consumer({"group.id": "g", **full})
    else:
        client = module.admin.AdminClient(full)
    close = getattr(client, "close", None)
    if close is not None:
        close()


def _outcome(kind: str, conf: dict[str, Any], module: Any) -> str:
    try:
        _make(kind, conf, module)
    except Exception as exc:  # either client's KafkaException, or confluent-kafka's TypeError/ValueError
        first = exc.args[0] if exc.args else exc
        return first.str() if hasattr(first, "str") else str(exc)
    return "ok"


DEFAULTS = [(name, default) for name, _scope, _kind, _rng, default, _target in PROPERTIES if default != ""]


@pytest.mark.parametrize("kind", CLIENTS)
def test_every_property_at_its_default_is_accepted_by_every_client(kind: str) -> None:
    """confluent-kafka's judgement is taken in the same run: it refuses a few defaults for their
    form (platform-specific ones, a Python type check), never for the name; kafkawire refuses none
    but the one its binding wants as a Python bool, as confluent-kafka does."""
    import confluent_kafka
    import confluent_kafka.admin

    import kafkawire
    import kafkawire.admin

    assert len(DEFAULTS) > 100
    logging.disable(logging.WARNING)
    try:
        ours = {name: _outcome(kind, {name: default}, kafkawire) for name, default in DEFAULTS}
        theirs = {name: _outcome(kind, {name: default}, confluent_kafka) for name, default in DEFAULTS}
    finally:
        logging.disable(logging.NOTSET)
    wants_bool = {"delivery.report.only.error"} if kind == "producer" else set()
    assert {name for name, why in ours.items() if why != "ok"} == wants_bool
    refused = {name: why for name, why in theirs.items() if why != "ok"}
    assert not any("No such configuration property" in why for why in refused.values())
    # What confluent-kafka refuses today: its build's feature list (sasl_gssapi is not in this
    # build), a Windows-only property, and a bool the Python wrapper wants as a bool.
    expected = {"builtin.features", "ssl.ca.certificate.stores"} | (
        {"delivery.report.only.error"} if kind == "producer" else set()
    )
    assert set(refused) == expected


@pytest.mark.parametrize("kind", CLIENTS)
def test_no_property_is_unknown_to_any_client(kind: str) -> None:
    import kafkawire
    import kafkawire.admin

    logging.disable(logging.WARNING)
    try:
        unknown = [
            name
            for name, *_ in PROPERTIES
            if "No such configuration property" in _outcome(kind, {name: "x"}, kafkawire)
        ]
    finally:
        logging.disable(logging.NOTSET)
    assert unknown == []


@pytest.fixture(scope="module")
def librdkafka_names() -> dict[str, str]:
    """Every name librdkafka knows (the library binary's name-like strings that its conf_set, or its
    topic conf_set, does not answer "unknown"), each with a value librdkafka takes for it, where one
    of a few does (none for the Java names it knows only to refuse)."""
    generator = _generator()
    lib = generator.load_librdkafka()
    defaults = {name: default for name, _scope, _kind, _rng, default, _target in PROPERTIES}
    out = {}
    for name in generator.known_names(lib):
        tries = [defaults.get(name, ""), "true", "1", "0", "", "x"]
        out[name] = next((v for v in tries if generator.conf_set(lib, name, v) == generator.CONF_OK), "x")
    return out


@pytest.mark.parametrize("kind", CLIENTS)
def test_no_name_librdkafka_knows_is_refused_as_unknown(kind: str, librdkafka_names: dict[str, str]) -> None:
    """Hidden ones included (enable.sparse.connections, client.software.name, ...): a configuration
    librdkafka takes never fails on kafkawire for its name."""
    import kafkawire
    import kafkawire.admin

    documented = {name for name, *_ in PROPERTIES[: -len(_generator().HIDDEN)]}
    assert len(librdkafka_names) > 200 and "enable.sparse.connections" in set(librdkafka_names) - documented
    logging.disable(logging.WARNING)
    try:
        outcomes = {name: _outcome(kind, {name: value}, kafkawire) for name, value in librdkafka_names.items()}
    finally:
        logging.disable(logging.NOTSET)
    assert {name: why for name, why in outcomes.items() if "No such configuration property" in why} == {}
    # The hidden names at a value librdkafka takes: accepted, or refused saying it is not supported.
    hidden = {name: outcomes[name] for name in set(librdkafka_names) - documented}
    assert {name: why for name, why in hidden.items() if why != "ok" and "not supported" not in why} == {}


def test_each_table_names_a_property_once_and_every_unimplemented_one_says_why() -> None:
    from kafkawire.admin.admin_config import ADMIN_OPTIONS
    from kafkawire.client.inert_properties import NO_EFFECT, ONLY_VALUES
    from kafkawire.consumer.consumer_config import CONSUMER_OPTIONS
    from kafkawire.producer.producer_config import PRODUCER_OPTIONS

    catalog = {row[0] for row in PROPERTIES}
    assert set(NO_EFFECT) <= catalog and set(ONLY_VALUES) <= catalog and not set(NO_EFFECT) & set(ONLY_VALUES)
    for table in (PRODUCER_OPTIONS, CONSUMER_OPTIONS, ADMIN_OPTIONS):
        keys = [key for opt in table for key in (opt.name, *opt.aliases)]
        assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("conf", "key"),
    [
        ({"ssl.engine.location": "/opt/engine.so"}, "ssl.engine.location"),
        ({"plugin.library.paths": "monitoring-interceptor"}, "plugin.library.paths"),
        ({"sasl.oauthbearer.metadata.authentication.type": "azure_imds"}, "metadata.authentication.type"),
        ({"queuing.strategy": "lifo"}, "queuing.strategy"),
        ({"socket.max.fails": 3}, "socket.max.fails"),
    ],
)
def test_a_value_selecting_what_kafkawire_lacks_fails_construction_saying_so(conf: dict[str, Any], key: str) -> None:
    import kafkawire

    with pytest.raises(KafkaException) as e:
        kafkawire.Producer({"bootstrap.servers": "127.0.0.1:1", **conf})
    message = e.value.args[0].str()
    assert e.value.args[0].code() == KafkaError._INVALID_ARG and key in message
    assert "not supported" in message or "is not supported" in message


def test_a_c_api_slot_is_refused_as_confluent_kafka_refuses_it() -> None:
    import confluent_kafka

    import kafkawire

    for key in ("socket_cb", "dr_msg_cb", "log_cb", "rebalance_cb"):
        ours = _outcome("producer", {key: print}, kafkawire)
        assert key in ours and "C API slot" in ours
        assert "must be set through dedicated" in _outcome("producer", {key: print}, confluent_kafka)


def test_values_of_any_type_are_taken_as_their_str_as_confluent_kafka_does() -> None:
    import uuid
    from decimal import Decimal

    import confluent_kafka

    import kafkawire
    from kafkawire.consumer.consumer_config import parse_consumer_config

    group = uuid.uuid1()
    cases = [
        {"group.id": group},
        {"client.id": 5},
        {"client.id": True},
        {"session.timeout.ms": Decimal(6000)},
        {"enable.auto.commit": "True"},
        {"broker.address.family": "V4"},
    ]
    for conf in cases:
        assert _outcome("consumer", conf, kafkawire) == "ok" == _outcome("consumer", conf, confluent_kafka), conf
    parsed = parse_consumer_config({"group.id": group, "session.timeout.ms": Decimal(6000), "client.id": True})
    assert parsed.group_id == str(group) and parsed["session.timeout.ms"] == 6000 and parsed["client.id"] == "True"
    for conf in ({"enable.auto.commit": 2}, {"enable.auto.commit": None}, {"session.timeout.ms": "soon"}):
        assert _outcome("consumer", conf, kafkawire) != "ok" and _outcome("consumer", conf, confluent_kafka) != "ok"


def clients_options() -> list[Any]:
    """Every client's option table, for docs/compatibility.md's table (its options without effect)."""
    from kafkawire.admin.admin_config import ADMIN_OPTIONS
    from kafkawire.consumer.consumer_config import CONSUMER_OPTIONS
    from kafkawire.producer.producer_config import PRODUCER_OPTIONS

    return [*PRODUCER_OPTIONS, *CONSUMER_OPTIONS, *ADMIN_OPTIONS]


def test_readme_table_is_the_codes() -> None:
    from kafkawire.client.inert_properties import readme_table

    text = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    start, end = "<!-- inert-properties:start -->\n", "\n<!-- inert-properties:end -->"
    assert start in text and end in text
    assert text[text.index(start) + len(start) : text.index(end)] == readme_table(clients_options())


# --- the producer's effective defaults against librdkafka's ---------------------------------------

# What librdkafka's rd_kafka_conf_finalize leaves for each, and kafkawire's ProducerConfig field.
EFFECTIVE = {
    "partitioner": "partitioner",
    "enable.idempotence": "enable_idempotence",
    "acks": "acks",
    "retries": "retries",
    "max.in.flight": "max_in_flight",
    "sticky.partitioning.linger.ms": "sticky_linger_ms",
    "linger.ms": "linger_ms",
    "message.timeout.ms": "message_timeout_ms",
    "socket.timeout.ms": "socket_timeout_ms",
}


def _librdkafka_effective(lib: Any, conf: dict[str, str], names: Any = EFFECTIVE) -> dict[str, str] | str:
    """librdkafka's producer configuration after rd_kafka_new finalized it (its error text when it
    refuses), read back with rd_kafka_conf_get from the handle's configuration."""
    import ctypes

    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_conf.restype = ctypes.c_void_p
    lib.rd_kafka_conf.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_conf_set_default_topic_conf.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.rd_kafka_destroy.argtypes = [ctypes.c_void_p]
    err = ctypes.create_string_buffer(512)
    handle = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set_default_topic_conf(handle, lib.rd_kafka_topic_conf_new())  # topic properties read too
    for name, value in {"log_level": "3", **conf}.items():  # (no notice that bootstrap.servers is unset)
        assert lib.rd_kafka_conf_set(handle, name.encode(), value.encode(), err, len(err)) == 0, err.value
    rk = lib.rd_kafka_new(0, handle, err, len(err))  # RD_KAFKA_PRODUCER; it owns the configuration now
    if not rk:
        lib.rd_kafka_conf_destroy(handle)
        return str(err.value.decode())
    try:
        out = {}
        for name in names:
            size = ctypes.c_size_t(512)
            buf = ctypes.create_string_buffer(512)
            assert lib.rd_kafka_conf_get(lib.rd_kafka_conf(rk), name.encode(), buf, ctypes.byref(size)) == 0, name
            out[name] = buf.value.decode()
        return out
    finally:
        lib.rd_kafka_destroy(rk)


@pytest.mark.parametrize(
    "conf",
    [
        {},
        {"enable.idempotence": "true"},
        {"transactional.id": "t"},
        {"acks": "1"},
        {"acks": "0", "retries": "0", "max.in.flight": "20"},
        {"linger.ms": "20"},
        {"linger.ms": "7.6"},
        {"linger.ms": "0"},
        {"sticky.partitioning.linger.ms": "3", "linger.ms": "50"},
        {"message.timeout.ms": "4"},
    ],
)
def test_producer_defaults_are_librdkafkas(conf: dict[str, str]) -> None:
    """The defaults and the ones librdkafka derives (idempotence's in-flight cap, twice linger.ms
    for the sticky partitioner, a transaction's timeouts) as the installed librdkafka has them:
    the partitioner and idempotence too, no longer Java's (README, "differs on purpose", once)."""
    from kafkawire.producer.producer_config import parse_producer_config

    theirs = _librdkafka_effective(_generator().load_librdkafka(), conf)
    assert isinstance(theirs, dict), theirs
    c = parse_producer_config(conf)
    ours = {name: getattr(c, field) for name, field in EFFECTIVE.items()}
    for name, value in theirs.items():
        mine = ours[name]
        if isinstance(mine, bool):
            assert value == str(mine).lower(), (name, conf)
        elif isinstance(mine, float):
            assert float(value) == mine, (name, conf)
        else:
            assert value == str(mine), (name, conf)


@pytest.mark.parametrize(
    "conf",
    [
        {},
        {"topic.metadata.refresh.interval.ms": "1000"},
        {"topic.metadata.refresh.interval.ms": "-1"},
        {"topic.metadata.refresh.interval.ms": "1000", "metadata.max.age.ms": "5000"},
        {"topic.metadata.refresh.interval.ms": "3600000"},
    ],
)
def test_metadata_max_age_derived_as_librdkafka_derives_it(conf: dict[str, str]) -> None:
    """Unset, metadata.max.age.ms is three refresh intervals (900 s by default), as rd_kafka_new
    makes it; set, it is what was set."""
    from kafkawire.base.config import CONNECTION_OPTIONS, parse_config

    name = "metadata.max.age.ms"
    theirs = _librdkafka_effective(_generator().load_librdkafka(), conf, [name])
    assert isinstance(theirs, dict), theirs
    assert str(parse_config(conf, CONNECTION_OPTIONS)[name]) == theirs[name], conf
