"""Time to authenticate with Kerberos (GSSAPI) against PLAIN on the same SASL_PLAINTEXT listener,
kafkawire and kafka-python (the reference, through the same ``gssapi`` package), on Apache Kafka 2.3
with an MIT KDC (the tests' harness: tests/harness/kdc.py, needs Java and Debian's krb5-kdc).

``python -m bench.kerberos_auth [--rounds 30]``: each round makes a fresh client and times
``list_topics()`` (kafka-python: ``KafkaConsumer.topics()``) from construction to the answer, so the
figure holds a connection's whole handshake (TCP, ApiVersions, SASL) and one Metadata round trip;
kafkawire's ``debug=security`` log gives the SASL exchange alone (from "Authenticating", logged
once the first token is made, so after the KDC's tickets, to "Authenticated"). Kerberos clients start with no ticket: each round asks
the KDC for a TGT and a service ticket, as a freshly started process would. Prints medians and
90th percentiles; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PLAIN = {"sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}


class _SaslSpan(logging.Handler):
    """The first connection's SASL time, from kafkawire's debug=security lines."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.started: float | None = None
        self.done: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if "Authenticating with SASL mechanism" in text and self.started is None:
            self.started = record.created
        elif "Authenticated" in text and self.done is None:
            self.done = record.created


def _kafkawire(conf: dict[str, Any]) -> tuple[float, float]:
    from kafkawire.admin import AdminClient

    span = _SaslSpan()
    logger = logging.getLogger("kafkawire")
    logger.addHandler(span)
    logger.setLevel(logging.DEBUG)
    try:
        start = time.perf_counter()
        admin = AdminClient({**conf, "debug": "security"})
        admin.list_topics(timeout=30)
        took = time.perf_counter() - start
        admin.close()
    finally:
        logger.removeHandler(span)
    assert span.started is not None and span.done is not None
    return took, span.done - span.started


def _kafka_python(bootstrap: str, mechanism: str) -> float:
    from kafka import KafkaConsumer

    extra: dict[str, Any] = (
        {"sasl_kerberos_service_name": "kafka"}
        if mechanism == "GSSAPI"
        else {"sasl_plain_username": "alice", "sasl_plain_password": "alice-secret"}
    )
    start = time.perf_counter()
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism, **extra
    )
    consumer.topics()
    took = time.perf_counter() - start
    consumer.close()
    return took


def _summary(name: str, values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return f"{name:<34} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms   (n={len(ms)})"


def main() -> None:
    from tests.harness.kafka_broker import KafkaBroker
    from tests.harness.kdc import Kdc

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with Kdc() as kdc:
        os.environ.update(kdc.env)
        keytab = kdc.dir / "kafkaclient.keytab"
        principal = kdc.add_principal("kafkaclient", keytab)
        with KafkaBroker(kerberos=kdc) as broker:
            bootstrap = broker.bootstrap("SASL_PLAINTEXT")
            base = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT"}
            gssapi = {**base, "sasl.mechanism": "GSSAPI", "sasl.kerberos.keytab": str(keytab)}
            results: dict[str, list[float]] = {}
            runs: list[tuple[str, Callable[[], Any]]] = [
                ("kafkawire GSSAPI", lambda: _kafkawire(gssapi)),
                ("kafkawire PLAIN", lambda: _kafkawire({**base, **PLAIN})),
                ("kafka-python GSSAPI", lambda: _kafka_python(bootstrap, "GSSAPI")),
                ("kafka-python PLAIN", lambda: _kafka_python(bootstrap, "PLAIN")),
            ]
            with tempfile.TemporaryDirectory() as caches:
                for i in range(args.rounds):
                    for name, run in runs:  # interleaved, so a slow moment of the machine hits all
                        cache = Path(caches) / f"{i}-{name.replace(' ', '-')}.cc"
                        if name == "kafka-python GSSAPI":  # its credentials: a fresh kinit'd cache
                            kdc.kinit(principal, keytab, cache)
                        os.environ["KRB5CCNAME"] = f"FILE:{cache}"
                        outcome = run()
                        if isinstance(outcome, tuple):
                            results.setdefault(name, []).append(outcome[0])
                            results.setdefault(f"{name} (SASL steps only)", []).append(outcome[1])
                        else:
                            results.setdefault(name, []).append(outcome)
    print(f"Time to a first Metadata answer from a fresh client, Kafka 2.3 SASL_PLAINTEXT ({args.rounds} rounds):")
    for name, values in results.items():
        print(_summary(name, values))


if __name__ == "__main__":
    main()
