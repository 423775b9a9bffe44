"""The pipeline as a file for ``spark-submit`` (which runs a .py file, not a module):

    spark-submit --master spark://host:7077 --archives env.tar.gz#env \\
        "$(python -c 'import kafkawire.pipeline.submit as s; print(s.__file__)')" \\
        hdfs:///data/orders.jsonl --topic orders --bootstrap-servers kafka:9092

Its arguments are those of ``kafkawire pipeline``; the session is the one spark-submit configured
(``--master`` and ``--conf`` there). ``python -m kafkawire.pipeline`` runs the same thing.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a file, Python puts this folder first on sys.path, where job.py, avro.py, ... would
    # shadow top-level modules of the same names: take it off before importing anything else.
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]

    from kafkawire.app.cli import main

    sys.exit(main(["pipeline", *sys.argv[1:]]))
