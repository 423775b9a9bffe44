"""Robot Framework with robotframework-confluentkafkalibrary, as a tester runs it: ``robot`` on a suite
of ours (tests/frameworks/suites/robot/kafka.robot) whose keywords are the library's and whose checks
are Robot's own. The program prints each test's name, status and failure message.

usage: robot_kafka.py BROKER TOPIC GROUP OUTPUT_DIR
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import confluent_kafka
import robot
from robot.api import ExecutionResult

SUITE = Path(__file__).resolve().parent / "suites" / "robot" / "kafka.robot"


def main(broker: str, topic: str, group: str, output_dir: str) -> None:
    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    server, port = broker.rsplit(":", 1)
    variables = [f"SERVER:{server}", f"PORT:{port}", f"TOPIC:{topic}", f"GROUP:{group}"]
    console = io.StringIO()
    robot.run(
        str(SUITE), variable=variables, outputdir=output_dir, log="NONE", report="NONE", stdout=console, stderr=console
    )
    result = ExecutionResult(str(Path(output_dir) / "output.xml"))
    for test in result.suite.all_tests:
        print(f"{test.name}: {test.status} {test.message}".rstrip())
    if result.suite.teardown and result.suite.teardown.status != "PASS":
        print(f"suite teardown: {result.suite.teardown.status} {result.suite.teardown.message}")


if __name__ == "__main__":
    main(*sys.argv[1:])
