"""Running a library's program (or its own test suite) twice, plainly on confluent-kafka and under
``python -m kafkawire.run``, in child processes against the same broker."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import kafkawire

HERE = Path(__file__).resolve().parent
SRC = str(Path(kafkawire.__file__).resolve().parents[1])
RUNS = ("confluent-kafka", "kafkawire")
EXITED = "exited"  # the last line run_program adds to the output of a run that failed


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]), **(extra or {}))


def on_client(on: str) -> list[str]:
    """The interpreter's command line that runs what follows on ``on``'s client."""
    return [sys.executable, "-m", "kafkawire.run"] if on == "kafkawire" else [sys.executable]


def run_program(program: str, args: list[str], on: str, timeout: float = 240, must_exit_0: bool = True) -> str:
    """Run ``tests/frameworks/<program>`` on ``on``; its stdout (it must name its client, and exit 0
    unless ``must_exit_0`` is false: then a failed run's stdout ends with how it exited)."""
    done = subprocess.run(
        [*on_client(on), str(HERE / program), *args], capture_output=True, text=True, timeout=timeout, env=child_env()
    )
    failure = f"{program} on {on} exited {done.returncode}:\n{done.stderr[-4000:]}"
    assert done.returncode == 0 or not must_exit_0, failure
    library = "kafkawire" if on == "kafkawire" else "confluent_kafka"
    assert f"client library: {library}\n" in done.stderr, failure
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:]
        return done.stdout + f"{EXITED} {done.returncode}: {last}\n"
    return done.stdout


def failed_run(output: str) -> bool:
    """Whether ``run_program``'s output is that of a run that did not exit 0."""
    return output.splitlines()[-1:] != [] and output.splitlines()[-1].startswith(EXITED)
