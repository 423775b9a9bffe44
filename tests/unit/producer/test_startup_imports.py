"""What a plain producer imports at start-up (issue 49, `bench/startup.py`): every CLI call, worker
and cold start pays for each module, so machinery for features the config does not use stays out.

Each case runs a fresh interpreter (the test process has imported everything already), builds a
`Producer` whose bootstrap address refuses connections, and lists which of the named modules it
loaded. A later change that imports one of them again at start-up fails here, naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHILD = """
import json, sys
import kafkawire
producer = kafkawire.Producer({config})
print(json.dumps(sorted(sys.modules)))
producer.close(0)
"""

# Parts a producer without transactions, TLS, compression or interceptors never uses at start-up; `dataclasses`
# (and `inspect`, which it imports) because a dataclass costs about a millisecond to create.
NOT_AT_START_UP = (
    "kafkawire.admin",
    "kafkawire.consumer",
    "kafkawire.share_consumer",
    "kafkawire.schema_registry",
    "kafkawire.serialization",
    "kafkawire.producer.transactions",
    "kafkawire.producer.aio",
    "kafkawire.io.tls",
    "kafkawire.security.tls_context",
    "kafkawire.base.record_metadata",
    "kafkawire.producer.producer_record",
    "asyncio",
    "ssl",
    "cramjam",
    "dataclasses",
    "inspect",
)


def loaded(config: dict[str, object], env: dict[str, str] | None = None) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(config=repr(config))],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    ).stdout
    return set(json.loads(out.strip().splitlines()[0]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in NOT_AT_START_UP))


PLAIN = {"bootstrap.servers": "127.0.0.1:9", "log_level": 0}


@pytest.mark.parametrize("pure", ["0", "1"], ids=["native", "pure-python"])
def test_a_plain_producer_imports_none_of_the_optional_parts(pure: str) -> None:
    assert heavy(loaded(PLAIN, {"KAFKAWIRE_PURE_PYTHON": pure})) == []


def test_configuring_tls_imports_it() -> None:
    """The judge of the list above: the same child does load what a config asks for."""
    modules = loaded({**PLAIN, "security.protocol": "ssl"})
    assert {"ssl", "kafkawire.security.tls_context"} <= modules
