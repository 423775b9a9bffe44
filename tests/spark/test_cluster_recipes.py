"""The README's cluster recipes (one per way of shipping Python to a cluster), run as written with
bash on a standalone cluster (tests/harness/spark_cluster.py) whose executors have no kafkawire of
their own: the daemons do not inherit this process's PYTHONPATH, and the executors' Python, unless
the recipe says otherwise, is a bare venv holding only pyarrow, cramjam and crc32c.

What is substituted: MASTER, KAFKA and INPUT (the recipes' variables); the venv path of recipe 1
(this interpreter's venv: the same path on every node of a one-machine cluster); and ``kafkawire``
in a pip command by the wheel built from this checkout (kafkawire is not fetched from an index).
Judged by confluent-kafka (Kafka 2.3: the pipeline's read-back ends at "latest", contributing/judges.md).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.harness.judge import consume_all
from tests.harness.kafka_broker import KafkaBroker
from tests.harness.spark_cluster import SparkCluster, pyspark_home
from tests.packaging.test_zip_import import build_wheel

pytestmark = [pytest.mark.spark, pytest.mark.broker, pytest.mark.slow, pytest.mark.rotating]

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "docs" / "pipeline.md"
SAMPLE = ROOT / "src" / "kafkawire" / "pipeline" / "data" / "orders.jsonl"
SAMPLE_ROWS = 5000
SHIPPED = ("pyarrow", "cramjam", "crc32c")  # what the cluster's own Python holds


def recipes() -> dict[int, str]:
    """The shell block of each numbered recipe in the pipeline page's cluster section."""
    section = README.read_text().split("## On a cluster", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"\*\*(\d)\. .*?```sh\n(.*?)```", section, re.S)
    return {int(n): block for n, block in found}


def test_the_readme_has_three_recipes() -> None:
    assert sorted(recipes()) == [1, 2, 3]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    with SparkCluster(tmp_path_factory.mktemp("recipes-cluster"), inherit_pythonpath=False) as running:
        yield running


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with no kafkawire: only the packages the cluster's Python is said to hold, linked in."""
    where = tmp_path_factory.mktemp("bare")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where / "venv")], check=True, timeout=120)
    deps = where / "deps"
    deps.mkdir()
    site = Path(next(p for p in sys.path if p.endswith("site-packages") and Path(p, "pyarrow").exists()))
    for entry in site.iterdir():
        if entry.name.split("-")[0] in SHIPPED:
            (deps / entry.name).symlink_to(entry)
    (site_of(where / "venv") / "shipped.pth").write_text(f"{deps}\n")
    python = where / "venv" / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = subprocess.run(
        [str(python), "-c", "import kafkawire"], capture_output=True, timeout=60, env=clean, cwd=where
    )
    assert probe.returncode != 0  # no kafkawire of its own
    return python


def site_of(venv: Path) -> Path:
    (site,) = (venv / "lib").glob("python3*/site-packages")
    return site


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def run_recipe(
    number: int, cluster: SparkCluster, bootstrap: str, topic: str, where: Path, bare: Path, **replace: str
) -> str:
    block = recipes()[number].replace("--topic orders", f"--topic {topic}")
    for old, new in replace.items():
        block = block.replace(old, new)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_")) and k != "PYTHONPATH"}
    env.update(
        MASTER=cluster.master_url,
        KAFKA=bootstrap,
        INPUT=str(SAMPLE),
        PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",  # spark-submit, pip
        SPARK_HOME=str(pyspark_home()),  # as a Spark installation sets it: spark-submit need not find it by Python
        # Whatever the recipe does not set, the executors run on the bare Python.
        PYSPARK_PYTHON=str(bare),
        PYSPARK_DRIVER_PYTHON=str(bare),
    )
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], env=env, capture_output=True, text=True, timeout=900, cwd=where
    )
    assert done.returncode == 0, f"{block}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-5000:]}"
    assert f"read back   {SAMPLE_ROWS:,} records" in done.stdout and ": OK" in done.stdout, done.stdout
    assert f"spark       {cluster.master_url}" in done.stdout
    return done.stdout


def judged(bootstrap: str, topic: str) -> None:
    got = consume_all(bootstrap, topic, SAMPLE_ROWS, timeout=60)
    assert len(got) == SAMPLE_ROWS


def test_recipe_1_same_venv_path(
    cluster: SparkCluster, kafka23: KafkaBroker, bare_python: Path, topic_name: Callable[[str], str], tmp_path: Path
) -> None:
    venv = str(Path(sys.executable).parent.parent)
    topic = topic_name("recipe1")
    run_recipe(1, cluster, kafka23.bootstrap(), topic, tmp_path, bare_python, **{"/opt/kafkawire": venv})
    judged(kafka23.bootstrap(), topic)


def test_recipe_2_packed_venv(
    cluster: SparkCluster,
    kafka23: KafkaBroker,
    bare_python: Path,
    wheel: Path,
    topic_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_name("recipe2")
    run_recipe(
        2, cluster, kafka23.bootstrap(), topic, tmp_path, bare_python, **{"install kafkawire": f"install {wheel}"}
    )
    judged(kafka23.bootstrap(), topic)


def test_recipe_3_zip_with_py_files(
    cluster: SparkCluster,
    kafka23: KafkaBroker,
    bare_python: Path,
    wheel: Path,
    topic_name: Callable[[str], str],
    tmp_path: Path,
) -> None:
    topic = topic_name("recipe3")
    source = wheel.parent.parent / "tree"  # the project copy the wheel was built from
    run_recipe(
        3, cluster, kafka23.bootstrap(), topic, tmp_path, bare_python, **{"--no-deps kafkawire": f"--no-deps {source}"}
    )
    judged(kafka23.bootstrap(), topic)
