"""``python -m kafkawire.run script.py [args]`` / ``python -m kafkawire.run -m package.module [args]``:
run a program written for confluent-kafka, unchanged, on kafkawire (``install_as_confluent_kafka``
first, then the program as ``python script.py`` or ``python -m`` would run it: its own ``sys.argv``,
``__name__ == "__main__"``, its exit status)."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from .app.alias import install_as_confluent_kafka

USAGE = (
    "usage: python -m kafkawire.run script.py [args ...]\n       python -m kafkawire.run -m package.module [args ...]"
)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args == ["-m"]:
        print(USAGE, file=sys.stdout if args[:1] in (["-h"], ["--help"]) else sys.stderr)
        return 0 if args[:1] in (["-h"], ["--help"]) else 2
    install_as_confluent_kafka()
    if args[0] == "-m":
        sys.argv = args[1:]  # runpy puts the module's file in sys.argv[0], as `python -m` does
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return 0
    script = args[0]
    sys.argv = args
    sys.path[0] = os.path.dirname(os.path.abspath(script))  # `python script.py` puts its directory first
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
