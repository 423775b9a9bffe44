"""No secret in any repr: every object reachable from a client (its engine, config holders, option
dicts, connections, SASL conversations) is walked through ``vars()``, slots and containers, and none
shows a password, key or token in repr() or str(). A traceback with locals, a debugger or a log of
``vars()`` reaches exactly these objects."""

from __future__ import annotations

import copy
import json
import pickle
import time
import types
from collections.abc import Iterator
from typing import Any

import pytest

import kafkawire
from kafkawire.admin import AdminClient
from kafkawire.base.config import SECURITY_OPTIONS, parse_config

SECRET = "s3cr3t-Pa55-not-for-logs"
NOWHERE = "127.0.0.1:1"
_LEAVES = (
    str,
    bytes,
    int,
    float,
    bool,
    type(None),
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
)


def reachable(root: Any) -> Iterator[tuple[str, Any]]:
    """(path, object) for every object reachable from ``root`` (leaves such as strings excepted)."""
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(root, "client")]
    while stack:
        obj, path = stack.pop()
        if id(obj) in seen or isinstance(obj, _LEAVES):
            continue
        seen.add(id(obj))
        yield path, obj
        if isinstance(obj, dict):
            stack += [(v, f"{path}[{k!r}]") for k, v in obj.items()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        else:
            attrs = getattr(obj, "__dict__", None)
            if isinstance(attrs, dict):
                stack += [(v, f"{path}.{k}") for k, v in attrs.items()]
            for cls in type(obj).__mro__:
                slots = cls.__dict__.get("__slots__", ())
                for slot in (slots,) if isinstance(slots, str) else slots:
                    if hasattr(obj, slot):
                        stack.append((getattr(obj, slot), f"{path}.{slot}"))


def shown(obj: Any) -> str:
    try:
        return repr(obj) + str(obj)
    except Exception:  # an object half set up may not print; it shows nothing then
        return ""


@pytest.mark.parametrize(
    "secrets",
    [
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "u",
            "sasl.password": SECRET,
        },
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "u",
            "sasl.password": SECRET,
        },
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.jaas.config": f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET}";',
        },
    ],
    ids=["plain", "scram", "jaas"],
)
def test_no_object_reachable_from_a_client_shows_a_secret(secrets: dict[str, str]) -> None:
    conf = {"bootstrap.servers": NOWHERE, "group.id": "g", "log_level": 0, **secrets}
    clients = [kafkawire.Producer(conf), kafkawire.Consumer(conf), AdminClient(conf)]
    try:
        time.sleep(0.3)  # connections tried (and SASL conversations made) by now
        leaks = [(type(c).__name__, path) for c in clients for path, obj in reachable(c) if SECRET in shown(obj)]
        assert leaks == []
    finally:
        clients[0].close()
        clients[1].close()


def test_option_dicts_hide_sensitive_values_but_copies_keep_them() -> None:
    options = parse_config({"sasl.password": SECRET, "ssl.key.password": SECRET}, SECURITY_OPTIONS)
    assert options["sasl.password"] == SECRET
    assert SECRET not in repr(options) and SECRET not in str(options) and "(hidden)" in repr(options)
    assert SECRET.encode() not in pickle.dumps(options)
    assert copy.copy(options)["sasl.password"] == copy.deepcopy(options)["ssl.key.password"] == SECRET
    assert repr(parse_config({}, SECURITY_OPTIONS)).count("(hidden)") == 0  # unset: nothing to hide


def test_no_statistics_show_a_secret() -> None:
    """stats_cb's JSON, from every client, with every secret option set: none appears."""
    seen: list[str] = []
    conf = {
        "bootstrap.servers": NOWHERE,
        "group.id": "g",
        "log_level": 0,
        "client.id": "stats-secrets",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.password": SECRET,
        "ssl.key.password": SECRET,
        "statistics.interval.ms": 20,
        "stats_cb": seen.append,
    }
    clients = [kafkawire.Producer(conf), kafkawire.Consumer(conf), AdminClient(conf)]
    try:
        deadline = time.monotonic() + 10
        while len({json.loads(s)["name"] for s in seen}) < 3 and time.monotonic() < deadline:
            for c in clients:
                c.poll(0.05)
        assert len({json.loads(s)["name"] for s in seen}) == 3
        assert not [s for s in seen if SECRET in s]
    finally:
        clients[0].close()
        clients[1].close()
