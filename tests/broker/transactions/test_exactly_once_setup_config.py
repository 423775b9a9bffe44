"""The exactly-once control topic and marker lookup take the write's whole producer config."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafkawire.local_broker import TansuBroker
from kafkawire.spark import exactly_once as eo

pytestmark = pytest.mark.broker


def test_producer_only_options_do_not_reach_the_admin_client(
    tansu: TansuBroker, topic_name: Callable[[str], str]
) -> None:
    # As a user's exactlyOnce write passes them: kafka.acks, kafka.linger.ms, kafka.compression.type.
    params = {"bootstrap.servers": tansu.bootstrap, "acks": "all", "linger.ms": "5", "compression.type": "lz4"}
    control = topic_name("ctl")
    eo.ensure_control_topic(params, control, timeout=10)
    eo.ensure_control_topic(params, control, timeout=10)  # already there: fine
    assert eo.committed_marker(params, control, "scope:0", timeout=10).batch_id is None
