"""What both verifiable clients share: the kafkatest event protocol (one JSON object per line on
stdout, diagnostics on stderr), SIGTERM as the request to stop, and the Java clients' arguments and
configuration files turned into a configuration."""

from __future__ import annotations

import datetime
import json
import os
import re
import signal
import socket
import sys
import time
from typing import Any


class VerifiableClient:
    def __init__(self, conf: dict[str, Any]) -> None:
        self.conf = conf
        self.conf["client.id"] = "python@" + socket.gethostname()
        self.run = True
        signal.signal(signal.SIGTERM, self.sig_term)
        self.dbg(f"Pid is {os.getpid()}")

    def sig_term(self, sig: int, frame: Any) -> None:
        """The test harness stops a client with SIGTERM: its loop ends and it shuts down cleanly."""
        self.dbg("SIGTERM")
        self.run = False

    @staticmethod
    def _timestamp() -> str:
        return time.strftime("%H:%M:%S", time.localtime())

    def dbg(self, s: str) -> None:
        sys.stderr.write(f"% {self._timestamp()} DEBUG: {s}\n")

    def err(self, s: str, term: bool = False) -> None:
        """An error on stderr; ``term``: the process exits with status 1."""
        sys.stderr.write(f"% {self._timestamp()} ERROR: {s}\n")
        if term:
            sys.stderr.write("% FATAL ERROR ^\n")
            sys.exit(1)

    def send(self, d: dict[str, Any]) -> None:
        """One event to the harness: ``d`` with its ``_time``, as a JSON line on stdout."""
        d["_time"] = str(datetime.datetime.now())
        line = json.dumps(d, default=_text)
        self.dbg(f"SEND: {line}")
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    @staticmethod
    def set_config(conf: dict[str, Any], args: dict[str, Any]) -> None:
        """Client properties from parsed arguments: ``conf_<property>`` and ``topicconf_<property>``
        (None: not given); the Java assignor class names become librdkafka's strategy names."""
        for name, value in args.items():
            if value is None:
                continue
            if name.startswith("topicconf_"):
                conf[name[len("topicconf_") :]] = value
                continue
            if not name.startswith("conf_"):
                continue  # the program's own argument
            name = name[len("conf_") :]
            if name == "partition.assignment.strategy":
                value = re.sub(r"org.apache.kafka.clients.consumer.(\w+)Assignor", lambda m: m.group(1).lower(), value)
                if value == "sticky":
                    value = "cooperative-sticky"
            conf[name] = value

    @staticmethod
    def read_config_file(path: str) -> dict[str, str]:
        """A Java client's properties file: ``key=value`` lines, ``#`` comments and blank lines skipped."""
        conf = {}
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                key, eq, value = line.partition("=")
                if not eq or not key:
                    raise Exception(f"{path}: invalid line, no key=value pair: {line}")
                conf[key] = value
        return conf


def _text(value: Any) -> Any:
    """Keys and values in events: bytes as text (the Java clients print strings)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
