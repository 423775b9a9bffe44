"""The ``debug`` mechanism (kafkawire.base.debug): contexts parsed as librdkafka parses them, lines in
librdkafka's shape, nothing formatted or written when a context is off, secrets never shown."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import pytest

from kafkawire import Consumer, KafkaException, Producer
from kafkawire.admin import AdminClient
from kafkawire.base.debug import CONTEXTS, HIDDEN, Debug, parse_contexts, shown_value
from kafkawire.client.logs import SENSITIVE

NOWHERE = "127.0.0.1:1"
# librdkafka's shape as confluent-kafka hands it to a logger: FACILITY [name] [thrd:where]: message
LINE = re.compile(
    r"^(?P<fac>[A-Z_]+) \[(?P<name>[^\]]+#(producer|consumer)-\d+)\] \[thrd:(?P<thrd>[^\]]+)\]: (?P<msg>.*)$"
)


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def lines(self) -> list[str]:
        """The DEBUG lines (errors reach the same logger as librdkafka's error lines do)."""
        return [r.getMessage() for r in self.records if r.levelno == logging.DEBUG]


def capturing(name: str) -> tuple[logging.Logger, Capture]:
    logger = logging.getLogger(f"test.debug.{name}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = Capture()
    logger.handlers[:] = [handler]
    return logger, handler


def test_all_turns_on_every_context_and_lists_are_librdkafkas() -> None:
    assert parse_contexts("all") == frozenset(CONTEXTS) - {"all"}
    assert parse_contexts("broker, protocol,,cgrp") == {"broker", "protocol", "cgrp"}
    assert parse_contexts(["fetch", "all"]) == frozenset(CONTEXTS) - {"all"}
    assert parse_contexts(None) == frozenset()


@pytest.mark.parametrize("value", ["nope", "", "broker,nope", []])
def test_an_unknown_or_empty_context_list_is_refused_at_construction(value: Any) -> None:
    with pytest.raises(ValueError, match="comma-separated list of generic, broker"):
        parse_contexts(value)
    with pytest.raises(KafkaException) as exc:
        Producer({"bootstrap.servers": NOWHERE, "debug": value})
    assert "debug" in exc.value.args[0].str()


def test_each_context_is_an_attribute_and_enabled_agrees() -> None:
    debug = Debug(parse_contexts("broker,eos"), logging.getLogger("x"), "c#producer-1")
    for context in CONTEXTS[:-1]:
        assert getattr(debug, context) is debug.enabled(context) is (context in ("broker", "eos"))


def test_a_line_has_librdkafkas_shape_and_is_formatted_only_when_kept() -> None:
    logger, handler = capturing("shape")
    debug = Debug({"protocol"}, logger, "app#producer-7")
    debug.log("protocol", "SEND", "127.0.0.1:9092/1", "%s: Sent %sRequest (v%d)", "127.0.0.1:9092/1", "Metadata", 12)
    [line] = handler.lines()
    m = LINE.match(line)
    assert m is not None, line
    assert (m["fac"], m["name"], m["thrd"]) == ("SEND", "app#producer-7", "127.0.0.1:9092/1")
    assert m["msg"] == "127.0.0.1:9092/1: Sent MetadataRequest (v12)"
    assert handler.records[0].levelno == logging.DEBUG

    class Exploding:
        def __str__(self) -> str:
            raise AssertionError("formatted although nothing keeps the line")

    debug.log("cgrp", "JOIN", "main", "%s", Exploding())  # context off: nothing happens
    logger.setLevel(logging.INFO)
    debug.log("protocol", "SEND", "main", "%s", Exploding())  # the logger drops DEBUG: not formatted
    assert len(handler.records) == 1


def test_without_any_handler_lines_go_to_stderr_as_librdkafka_writes_them(capsys: pytest.CaptureFixture[str]) -> None:
    lonely = logging.getLogger("test.debug.lonely.child")
    root = logging.getLogger()
    saved, root.handlers = root.handlers, []
    try:
        debug = Debug({"broker"}, lonely, "x#consumer-2")
    finally:
        root.handlers = saved
    debug.log("broker", "STATE", "h:1/bootstrap", "changed %s", "state")
    err = capsys.readouterr().err
    assert re.match(r"^%7\|\d+\.\d{3}\|STATE\|x#consumer-2\| \[thrd:h:1/bootstrap\]: changed state\n$", err), err


def test_the_configuration_dump_hides_secrets_and_objects() -> None:
    logger, handler = capturing("conf")
    debug = Debug({"conf"}, logger, "c#producer-1")
    debug.dump_config(
        {
            "sasl.username": "alice",
            "sasl.password": "pw-1",
            "sasl.jaas.config": 'x required password="pw-2";',
            "ssl.key.password": "pw-3",
            "sasl.oauthbearer.client.secret": "pw-4",
            "sasl.oauthbearer.assertion.private.key.passphrase": "pw-5",
            "error_cb": lambda e: None,
            "debug": ["conf", "broker"],
            "linger.ms": 5,
        },
        SENSITIVE,
    )
    text = "\n".join(handler.lines())
    assert "pw-" not in text
    assert "sasl.username = alice" in text and "linger.ms = 5" in text and "debug = conf,broker" in text
    assert text.count(HIDDEN) == 5 and "error_cb = <function>" in text
    assert shown_value("ssl.keystore.password", "pw", SENSITIVE) == HIDDEN


@pytest.mark.parametrize("make", [Producer, AdminClient, lambda c: Consumer({**c, "group.id": "g"})])
def test_clients_log_nothing_at_debug_with_debug_off(make: Any) -> None:
    """Not even INIT: librdkafka writes it under a debug context only (its ``all`` category)."""
    logger, handler = capturing(f"off.{id(make)}")
    client = make({"bootstrap.servers": NOWHERE, "logger": logger, "socket.connection.setup.timeout.ms": 1000})
    try:
        client.poll(0.3)
    finally:
        client.close() if not isinstance(client, Producer) else client.flush(0)
    facilities = {LINE.match(line)["fac"] for line in handler.lines() if LINE.match(line)}  # type: ignore[index]
    assert facilities == set(), handler.lines()


def test_a_client_with_debug_all_names_itself_and_dumps_its_configuration() -> None:
    logger, handler = capturing("all")
    p = Producer(
        {
            "bootstrap.servers": NOWHERE,
            "logger": logger,
            "debug": "all",
            "client.id": "me",
            "sasl.password": "hunter2",
            "socket.connection.setup.timeout.ms": 1000,
        }
    )
    wanted = {"INIT", "CONF", "STATE", "CONNECT", "FAIL"}
    deadline = time.monotonic() + 30
    try:
        # (the records reach the logger as poll() serves them, as confluent-kafka's)
        while not wanted <= {m["fac"] for line in handler.lines() if (m := LINE.match(line))}:
            assert time.monotonic() < deadline, handler.lines()
            p.poll(0.1)
    finally:
        p.flush(0)
    lines = handler.lines()
    assert all(LINE.match(line) for line in lines), [line for line in lines if not LINE.match(line)]
    names = {LINE.match(line)["name"] for line in lines}  # type: ignore[index]
    assert len(names) == 1 and names.pop().startswith("me#producer-")
    facilities = {LINE.match(line)["fac"] for line in lines}  # type: ignore[index]
    assert wanted <= facilities
    assert "hunter2" not in "\n".join(lines)
