"""Admin config values of any type, as confluent-kafka passes them (issue 49): each value goes out as
its ``str()``. The same calls on both clients against the same broker, outcomes and the values read
back (by confluent-kafka) compared."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import confluent_kafka.admin
import pytest

import kafkawire.admin

pytestmark = pytest.mark.broker

ADMINS = {"confluent-kafka": confluent_kafka.admin, "kafkawire": kafkawire.admin}
_names = itertools.count()


def _outcome(future: Any) -> str:
    try:
        future.result(30)
    except Exception as exc:
        error = exc.args[0] if exc.args else None
        code = error.code() if hasattr(error, "code") and callable(error.code) else None
        return f"{type(exc).__name__}({code})"
    return "done"


def _retention(judge: Any, topic: str) -> str | None:
    resource = confluent_kafka.admin.ConfigResource("topic", topic)
    entries = judge.describe_configs([resource])[resource].result(30)
    return entries["retention.ms"].value


@pytest.mark.parametrize("value", [3_600_000, 3_600_000.0, "3600000", True])
@pytest.mark.parametrize("broker", ["kafka23"])  # (Tansu answers AlterConfigs on some connections only)
def test_config_values_of_any_type_go_out_as_their_text(
    broker: str, value: Any, request: pytest.FixtureRequest
) -> None:
    found = request.getfixturevalue(broker).bootstrap
    bootstrap = found() if callable(found) else found  # (Kafka 2.3's is per listener: PLAINTEXT)
    judge = confluent_kafka.admin.AdminClient({"bootstrap.servers": bootstrap})
    seen = {}
    for client, module in ADMINS.items():
        admin = module.AdminClient({"bootstrap.servers": bootstrap})
        topic = f"values-{next(_names)}-{client}"
        created = _outcome(admin.create_topics([module.NewTopic(topic, 1, 1, config={"retention.ms": value})])[topic])
        after_create = _retention(judge, topic) if created == "done" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (alter_configs is deprecated on both)
            resource = module.ConfigResource("topic", topic, set_config={"retention.ms": value})
            altered = _outcome(admin.alter_configs([resource])[resource]) if created == "done" else None
        seen[client] = (created, after_create, altered, _retention(judge, topic) if altered == "done" else None)
    assert seen["kafkawire"] == seen["confluent-kafka"]
    if isinstance(value, int) and not isinstance(value, bool):
        assert seen["kafkawire"] == ("done", "3600000", "done", "3600000")
