"""``python -m kafkawire.pipeline ARGS`` is ``kafkawire pipeline ARGS``."""

import sys

from kafkawire.app.cli import main

sys.exit(main(["pipeline", *sys.argv[1:]]))
