"""The per-broker part of a client's statistics (``stats_cb``), under librdkafka's names: shared by
the producer's and the consumer's snapshots."""

from __future__ import annotations

from typing import Any

from ..model import broker_name
from .cluster import Client


def brokers_snapshot(client: Client) -> dict[str, Any]:
    brokers = {}
    lanes = client.lanes()
    for conn in client.connections():
        st = conn.stats
        lane = conn in lanes  # librdkafka lists its coordinator connection as "GroupCoordinator"
        name = "GroupCoordinator" if lane else broker_name(conn.host, conn.port, conn.node_id)
        brokers[name] = {
            "name": name,
            "nodeid": -1 if lane else conn.node_id,
            "state": conn.state.value.upper(),
            "tx": st.tx,
            "rx": st.rx,
            "waitresp_cnt": conn.in_flight,
            "outbuf_cnt": conn.load - conn.in_flight,
            "rtt": {
                "min": int(st.rtt_min * 1e6),
                "max": int(st.rtt_max * 1e6),
                "avg": int(st.rtt_sum / st.rx * 1e6) if st.rx else 0,
                "cnt": st.rx,
            },
        }
    return brokers
