"""What the ``mock`` debug context says about the mock cluster (`kafkawire.base.debug` writes it):
each request a broker received and the answer it sent, each fault served (an injected error, a
dropped connection), and each fault the test set up. Lines in librdkafka's mock facility
(``MOCK``, thread ``mock``); callers ask ``if debug.mock:`` first. Request bodies are never
shown (SASL requests carry passwords)."""

from __future__ import annotations

from kafkawire.base.debug import Debug
from kafkawire.protocol.error_table import error_for
from kafkawire.protocol.schema import Api

WHERE = "mock"


def received(debug: Debug, broker_id: int, connection: int, api: Api, version: int, client_id: str | None) -> None:
    debug.log(
        "mock",
        "MOCK",
        WHERE,
        "Broker %d: Received %sRequestV%d from connection %d (client.id %s)",
        broker_id,
        api.name,
        version,
        connection,
        client_id,
    )


def sending(debug: Debug, broker_id: int, api: Api, version: int, size: int, delay_ms: int) -> None:
    debug.log(
        "mock",
        "MOCK",
        WHERE,
        "Broker %d: Sending %sResponseV%d (%d bytes, delayed %d ms)",
        broker_id,
        api.name,
        version,
        size,
        delay_ms,
    )


def refused(debug: Debug, broker_id: int, api: Api, version: int, why: str) -> None:
    debug.log(
        "mock", "MOCK", WHERE, "Broker %d: %sRequestV%d: closing the connection: %s", broker_id, api.name, version, why
    )


def injected(debug: Debug, broker_id: int, api: Api, version: int, error: int, delay_ms: int) -> None:
    debug.log(
        "mock",
        "MOCK",
        WHERE,
        "Broker %d: Injecting error %s into %sResponseV%d (delayed %d ms)",
        broker_id,
        error_for(error).name,
        api.name,
        version,
        delay_ms,
    )


def fault_set(debug: Debug, what: str) -> None:
    debug.log("mock", "MOCK", WHERE, "Fault set up: %s", what)
