"""kafkawire imported from its built wheel as a zip (zipimport), as ``--py-files`` ships it to Spark.

A zip cannot hold a namespace package (a directory without ``__init__.py``), and the C extension
cannot be loaded from one: the import must find every package and fall back to pure Python.
The wheel is built by pip from a copy of the source tree (nothing is written to the checkout);
what it sends and reads is judged by confluent-kafka.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkawire.local_broker import TansuBroker
from tests.harness.judge import consume_all

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.broker


def package_directories() -> list[Path]:
    """Every directory under src/kafkawire holding Python source."""
    return sorted({p.parent for p in (ROOT / "src" / "kafkawire").rglob("*.py") if "__pycache__" not in p.parts})


def test_every_package_directory_is_a_regular_package() -> None:
    missing = [str(d.relative_to(ROOT)) for d in package_directories() if not (d / "__init__.py").exists()]
    assert missing == []


def build_wheel(into: Path) -> Path:
    """``pip wheel --no-deps`` on a copy of the project (its build dirs stay out of the checkout)."""
    tree = into / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.egg-info"))
    out = into / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(tree)],
        check=True,
        timeout=600,
    )
    (wheel,) = out.glob("kafkawire-*.whl")
    return wheel


# Runs in a fresh interpreter whose sys.path starts with the wheel: every kafkawire module comes
# from the zip (the checkout's src and the editable install come after it).
CHILD = r"""
import json, pkgutil, sys
sys.path.insert(0, sys.argv[1])
import kafkawire
from kafkawire import Producer, Consumer
from kafkawire.native import native
names = []
for part in ("protocol", "records", "core", "io", "client", "producer", "consumer", "admin", "spark", "pipeline"):
    package = __import__("kafkawire." + part, fromlist=["_"])
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.endswith("__main__"):
            continue
        __import__(info.name)
        names.append(info.name)
bootstrap, topic = sys.argv[2], sys.argv[3]
producer = Producer({"bootstrap.servers": bootstrap})
for i in range(3):
    producer.produce(topic, value=b"zip-%d" % i, key=b"k")
assert producer.flush(30) == 0
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "zip-" + topic, "auto.offset.reset": "earliest"})
consumer.subscribe([topic])
got = []
while len(got) < 3:
    m = consumer.poll(30)
    assert m is not None and m.error() is None, m
    got.append(m.value().decode())
consumer.close()
print(json.dumps({"file": kafkawire.__file__, "io": sys.modules["kafkawire.io"].__file__,
                  "native": native is not None, "modules": names, "read": got}))
"""


@pytest.mark.slow  # builds the wheel, then a producer and consumer from the zip: over a minute
def test_wheel_imports_as_a_zip_in_pure_python(
    tmp_path: Path, tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    wheel = build_wheel(tmp_path)
    topic = topic_name("zip")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(wheel), tansu.bootstrap, topic],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,  # not the checkout: its src must not be importable by accident
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["file"].startswith(str(wheel) + "/")
    assert report["io"].startswith(str(wheel) + "/")
    assert report["native"] is False  # the extension is in the wheel but cannot load from a zip
    assert "kafkawire.io.io_engine" in report["modules"]
    assert "kafkawire.spark.reader" in report["modules"]
    assert report["read"] == ["zip-0", "zip-1", "zip-2"]
    judged = consume_all(tansu.bootstrap, topic, 3, isolation_level="read_uncommitted")
    assert [m.value() for m in judged] == [b"zip-0", b"zip-1", b"zip-2"]
