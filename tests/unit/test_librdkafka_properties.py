"""The librdkafka property catalog against the librdkafka installed with confluent-kafka: a new
librdkafka version that adds, drops or changes a property fails here until the table is generated
again (scripts/generate_librdkafka_properties.py). And each client type's treatment of another's
property, as librdkafka's: checked, then ignored with a warning."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

from kafkawire import KafkaError, KafkaException
from kafkawire.client.librdkafka_properties import LIBRDKAFKA_VERSION, PROPERTIES
from kafkawire.client.options import CONSUMER, PRODUCER, foreign_keys

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "generate_librdkafka_properties.py"


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
    assert tuple(generator.parse(table)) == PROPERTIES


def test_every_property_has_a_client_type_and_a_known_kind() -> None:
    names = {row[0] for row in PROPERTIES}
    assert len(names) == len(PROPERTIES) > 150
    for name, scope, kind, _rng, _default, alias in PROPERTIES:
        assert scope in ("*", "P", "C"), name
        assert kind in ("int", "float", "bool", "enum", "str", "list", "api"), name
        assert not alias or alias in names, name


def test_another_client_types_property_is_checked_and_set_aside() -> None:
    assert foreign_keys({"linger.ms": 5, "acks": "all", "group.id": "g"}, {}, CONSUMER) == {"linger.ms": 5, "acks": "all"}
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
        AdminClient(conf)
    text = caplog.text
    assert "group.id is a consumer property and will be ignored by this producer instance" in text
    assert "linger.ms is a producer property and will be ignored by this consumer instance" in text
    assert "group.id is a consumer property and will be ignored by this admin instance" in text
    admin_lines = [line for line in text.splitlines() if "admin instance" in line]
    assert not any("producer property" in line for line in admin_lines)  # an admin client is a producer
