"""The driver's address for a standalone cluster (``--master spark://...``).

Executors connect back to the driver, which Spark advertises under this machine's host name; on
many machines that name resolves to a loopback address (Debian's 127.0.1.1) that no other machine
can reach, and Spark binds there too. So the pipeline chooses the address itself: the local
address a connection to the master would leave from (a UDP socket's route, nothing sent). A master
on loopback gives 127.0.0.1, a single-machine cluster. ``SPARK_LOCAL_IP`` set by the user wins.
"""

from __future__ import annotations

import ipaddress
import os
import socket

STANDALONE = "spark://"


def master_hosts(master: str) -> list[tuple[str, int]]:
    """``spark://h1:7077,h2:7077`` -> [(h1, 7077), (h2, 7077)]; [] for any other master."""
    if not master.startswith(STANDALONE):
        return []
    out = []
    for item in master[len(STANDALONE) :].split(","):
        host, _, port = item.strip().rpartition(":")
        out.append((host.strip("[]") or item.strip(), int(port) if port.isdigit() else 7077))
    return out


def _route_from(host: str, port: int) -> str:
    family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    with socket.socket(family, kind, proto) as probe:
        probe.connect(where)  # UDP: chooses the route, sends nothing
        return str(probe.getsockname()[0])


def driver_address(master: str) -> str | None:
    """The address to bind and advertise for ``master`` (None: not a standalone master, or
    ``SPARK_LOCAL_IP`` already says). OSError when no route to the master is found."""
    hosts = master_hosts(master)
    if not hosts or os.environ.get("SPARK_LOCAL_IP"):
        return None
    address = _route_from(*hosts[0])
    if ipaddress.ip_address(address).is_loopback:
        return "127.0.0.1"  # the master is on this machine's loopback: so are its workers
    return address
