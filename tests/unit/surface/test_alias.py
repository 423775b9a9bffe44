"""``install_as_confluent_kafka`` and ``python -m kafkawire.run``, each in a child process (the alias
changes the process's imports, and the tests' own process has the real confluent_kafka loaded).

Every module confluent-kafka has is imported under the alias and every name it gives looked up: a
name kafkawire has must be kafkawire's object, and what kafkawire lacks is listed in
tests/unit/surface/alias_gaps.py, held equal to what is found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import kafkawire
from kafkawire.app import alias
from tests.unit.surface.alias_gaps import KNOWN_MISSING, UNIMPORTABLE

SRC = str(Path(kafkawire.__file__).resolve().parents[1])
PROBE = str(Path(__file__).resolve().parents[2] / "harness" / "alias_probe.py")


def _env(*paths: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*paths, SRC, env.get("PYTHONPATH", "")])
    return env


def _python(
    *args: str, stdin: str = "", cwd: str | None = None, path: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=240, env=_env(*path), cwd=cwd
    )


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    names = _python(PROBE, "confluent")
    assert names.returncode == 0, names.stderr
    found = _python(PROBE, "alias", stdin=names.stdout)
    assert found.returncode == 0, found.stderr
    out: dict[str, Any] = json.loads(found.stdout)
    out["modules"] = sorted(json.loads(names.stdout))
    return out


def _short(module: str) -> str:
    return module[len("confluent_kafka") :] or "."


def test_the_walk_covers_confluent_kafkas_tree(report: dict[str, Any]) -> None:
    modules = report["modules"]
    assert len(modules) > 100
    for name in (
        "confluent_kafka",
        "confluent_kafka.cimpl",
        "confluent_kafka.admin._group",
        "confluent_kafka.aio.producer",
    ):
        assert name in modules


def test_every_module_imports_but_those_listed(report: dict[str, Any]) -> None:
    failed = {_short(m): error for m, error in report["unimportable"].items()}
    assert set(failed) == UNIMPORTABLE, {m: failed.get(m, "imports now") for m in set(failed) ^ UNIMPORTABLE}


def test_every_name_kafkawire_has_is_kafkawires(report: dict[str, Any]) -> None:
    assert report["foreign"] == {}


def test_the_names_kafkawire_lacks_are_the_listed_ones(report: dict[str, Any]) -> None:
    missing = {_short(m): " ".join(names) for m, names in report["missing"].items()}
    listed = {m: " ".join(names.split()) for m, names in KNOWN_MISSING.items()}
    assert missing == listed


def test_the_alias_is_kafkawires_own_modules() -> None:
    code = """
        import sys, kafkawire, kafkawire.admin
        kafkawire.install_as_confluent_kafka()
        kafkawire.install_as_confluent_kafka()
        import confluent_kafka, confluent_kafka.admin
        from confluent_kafka.admin import AdminClient
        from confluent_kafka.cimpl import NewTopic, Producer
        from confluent_kafka.schema_registry.avro import AvroSerializer
        import confluent_kafka.admin._group as group
        finders = [f for f in sys.meta_path if type(f).__module__ == "kafkawire.app.alias"]
        print(confluent_kafka is kafkawire, confluent_kafka.admin is kafkawire.admin, group is kafkawire.admin,
              AdminClient is kafkawire.admin.AdminClient, NewTopic is kafkawire.admin.NewTopic,
              Producer is kafkawire.Producer, AvroSerializer.__module__.startswith("kafkawire."),
              kafkawire.__spec__.name, kafkawire.admin.__spec__.name, len(finders), sys.meta_path[0] is finders[0])
    """
    done = _python("-c", textwrap.dedent(code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"] * 7 + ["kafkawire", "kafkawire.admin", "1", "True"]


def test_a_submodule_the_package_shadows_keeps_the_packages_name() -> None:
    # confluent_kafka.avro's `load` is the function and confluent_kafka.avro.load the module it comes from.
    code = """
        import kafkawire
        kafkawire.install_as_confluent_kafka()
        import confluent_kafka.avro.load
        import confluent_kafka.avro.load as imported
        from confluent_kafka.avro import load
        import sys, kafkawire.avro
        print(load is kafkawire.avro.load, imported is load, callable(load),
              sys.modules["confluent_kafka.avro.load"] is sys.modules["kafkawire.avro.load"])
    """
    done = _python("-c", textwrap.dedent(code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"] * 4


def test_the_alias_is_bound_once_installed() -> None:
    # An import hook keyed by module name (ddtrace's patch(kafka=True)) registered after the alias
    # is installed but before the program's own import must find confluent_kafka under that name.
    code = """
        import sys, kafkawire
        kafkawire.install_as_confluent_kafka()
        print(sys.modules.get("confluent_kafka") is kafkawire)
    """
    done = _python("-c", textwrap.dedent(code))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"]


def test_a_process_that_loaded_confluent_kafka_is_refused() -> None:
    code = """
        import confluent_kafka, kafkawire
        try:
            kafkawire.install_as_confluent_kafka()
        except ImportError as exc:
            print(type(exc).__name__, exc.name)
            print(exc)
    """
    done = _python("-c", textwrap.dedent(code))
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "ConfluentKafkaAlreadyImported confluent_kafka"
    assert "already imported" in second and "confluent_kafka/__init__.py" in second


def test_a_kafkawire_module_of_the_same_name_wins_over_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(alias.NEAREST, "confluent_kafka.admin", ("kafkawire",))
    assert alias.kafkawire_modules("confluent_kafka.admin") == ("kafkawire.admin",)
    assert alias.kafkawire_modules("confluent_kafka.admin._group") == ("kafkawire.admin",)
    assert alias.kafkawire_modules("confluent_kafka.aio.producer._no_such_part") is None
    assert alias.kafkawire_modules("confluent_kafkax") is None


PROGRAM = """
    import sys
    import confluent_kafka
    from confluent_kafka.admin import AdminClient
    print(__name__, confluent_kafka.__name__, AdminClient.__module__, *sys.argv[1:])
    sys.exit(int(sys.argv[-1]))
"""


def test_run_a_script(tmp_path: Path) -> None:
    script = tmp_path / "program.py"
    (tmp_path / "neighbour.py").write_text("")  # the script's directory is first on sys.path
    script.write_text(textwrap.dedent(PROGRAM).replace("import sys\n", "import sys\nimport neighbour\n", 1))
    done = _python("-m", "kafkawire.run", str(script), "--flag", "x", "3")
    assert done.returncode == 3, done.stderr
    assert done.stdout.split() == ["__main__", "kafkawire", "kafkawire.admin.client", "--flag", "x", "3"]


def test_run_a_module(tmp_path: Path) -> None:
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(
        textwrap.dedent(PROGRAM).replace("*sys.argv[1:]", "sys.argv[0].endswith('main.py'), *sys.argv[1:]")
    )
    done = _python("-m", "kafkawire.run", "-m", "app.main", "a", "0", cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["__main__", "kafkawire", "kafkawire.admin.client", "True", "a", "0"]


def test_run_without_a_program_says_how() -> None:
    done = _python("-m", "kafkawire.run")
    assert done.returncode == 2 and "usage: python -m kafkawire.run" in done.stderr
