"""The README's quick starts run as written (against Tansu instead of 127.0.0.1:9092)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkawire.local_broker import TansuBroker

pytestmark = pytest.mark.broker

README = Path(__file__).resolve().parents[2] / "README.md"
_PYTHON = r"```python\n(.*?)```"
# "Connecting to a secured cluster" needs secured listeners: test_readme_security.py and
# tests/spark/test_secured.py run those.
_SECURED = re.search(r"### Connecting to a secured cluster\n(.*?)\n##", README.read_text(), re.S)
SECURED_BLOCKS = re.findall(_PYTHON, _SECURED.group(1), re.S) if _SECURED else []
ALL_BLOCKS = [b for b in re.findall(_PYTHON, README.read_text(), re.S) if b not in SECURED_BLOCKS]
# The Spark examples work on a session and a DataFrame the reader has; tests/spark runs them.
SPARK_BLOCKS = [b for b in ALL_BLOCKS if "df." in b or "(df" in b]
BLOCKS = [b for b in ALL_BLOCKS if b not in SPARK_BLOCKS]


def test_readme_has_a_quick_start_for_every_face() -> None:
    text = "\n".join(BLOCKS)
    for face in ("Producer(", ".send(", "SyncProducer(", "AIOProducer(", "Consumer(", "AIOConsumer("):
        assert face in text, f"no quick start shows {face}"


@pytest.mark.slow
def test_quick_starts_run_in_order(tansu: TansuBroker, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, object] = {}
    for block in BLOCKS:
        code = block.replace("127.0.0.1:9092", tansu.bootstrap)
        exec(compile(code, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "orders[" in out and "failed" not in out
