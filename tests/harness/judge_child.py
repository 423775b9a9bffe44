"""A judge's side of a differential case in a process of its own, for cases where confluent-kafka
aborts its process (a failed assertion in its C binding) or never returns: the test's own process
must survive both to compare.

``python -m tests.harness.judge_child MODULE:FUNCTION JSON_KWARGS`` calls the function with the
keyword arguments and ``report``, through which it tells each call as it starts and as it ends;
every word is one JSON line on stdout, so the parent knows what the child did up to the moment it
died or stopped answering. The parent (`run_in_child`) records how the child ended as an outcome
class: ``ok`` (the function returned and the process exited 0), ``aborted`` (a signal or a non-zero
exit code) or ``hung`` (no word within a generous bound, after which the child is killed). A call
under way at that moment gets the class as its outcome; the calls never reached have none.
"""

from __future__ import annotations

import importlib
import json
import os
import queue
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OK, ABORTED, HUNG = "ok", "aborted", "hung"


class Report:
    """The child's side: each call's start and outcome, one flushed JSON line each."""

    def start(self, kind: str, name: str) -> None:
        _say({"start": [kind, name]})

    def done(self, kind: str, name: str, outcome: tuple[Any, ...]) -> None:
        _say({"done": [kind, name], "outcome": list(outcome)})


def _say(word: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(word) + "\n")
    sys.stdout.flush()


@dataclass
class ChildRun:
    """What the parent saw: each call's outcome by callback kind and name, and how the child ended."""

    results: dict[str, dict[str, tuple[Any, ...]]] = field(default_factory=dict)
    end: str = OK
    returncode: int | None = None
    stderr_tail: str = ""


def run_in_child(target: str, kwargs: dict[str, Any], call_bound: float, quiet_bound: float) -> ChildRun:
    """Run ``target`` (``module:function``) in a fresh interpreter. The child is ``hung`` when a call
    it started has no outcome after ``call_bound`` seconds, or when it says nothing at all for
    ``quiet_bound`` seconds (both far above what the case needs when it works)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.harness.judge_child", target, json.dumps(kwargs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    words: queue.Queue[str | None] = queue.Queue()
    stderr: list[str] = []

    def read_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            words.put(line)
        words.put(None)

    def read_err() -> None:
        assert proc.stderr is not None
        stderr.append(proc.stderr.read())

    readers = [threading.Thread(target=read_out, daemon=True), threading.Thread(target=read_err, daemon=True)]
    for reader in readers:
        reader.start()
    run = ChildRun()
    under_way: tuple[str, str] | None = None
    returned = False
    try:
        while True:
            bound = call_bound if under_way is not None else quiet_bound
            try:
                line = words.get(timeout=bound)
            except queue.Empty:
                run.end = HUNG
                break
            if line is None:  # stdout closed: the child is gone
                break
            if not line.startswith("{"):
                continue  # a library's own print
            word = json.loads(line)
            if "error" in word:
                raise AssertionError(f"the child's case failed: {word['error']}")
            if "start" in word:
                kind, name = word["start"]
                under_way = (kind, name)
                run.results.setdefault(kind, {})
            elif "done" in word:
                kind, name = word["done"]
                run.results.setdefault(kind, {})[name] = tuple(word["outcome"])
                under_way = None
            elif "returned" in word:
                returned = True
    finally:
        if run.end == HUNG:
            proc.kill()
        try:
            run.returncode = proc.wait(timeout=quiet_bound)
        except subprocess.TimeoutExpired:  # closed its stdout, yet does not exit
            proc.kill()
            run.returncode = proc.wait()
            run.end = HUNG
        for reader in readers:
            reader.join(timeout=5)
    if run.end != HUNG and (run.returncode != 0 or not returned):
        run.end = ABORTED
    if under_way is not None:
        kind, name = under_way
        run.results[kind][name] = (run.end,)
    run.stderr_tail = "".join(stderr)[-2000:]
    return run


def main(argv: list[str]) -> int:
    target, kwargs = argv[1], json.loads(argv[2])
    module_name, function_name = target.split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    try:
        function(**kwargs, report=Report())
    except BaseException:
        _say({"error": traceback.format_exc()[-3000:]})
        return 1
    _say({"returned": True})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
