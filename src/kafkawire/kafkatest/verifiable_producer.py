"""kafkatest's verifiable producer: ``--max-messages`` values (``<prefix>.<n>`` or ``<n>``) to
``--topic`` at ``--throughput`` records a second (0: as fast as it can), each delivery reported
(``producer_send_success`` with its partition and offset, or ``producer_send_error``), then
``shutdown_complete`` once flushed."""

from __future__ import annotations

import argparse
import time
from typing import Any

from .. import KafkaException, Producer
from .verifiable_client import VerifiableClient


class VerifiableProducer(VerifiableClient):
    def __init__(self, conf: dict[str, Any]) -> None:
        super().__init__(conf)
        self.conf["on_delivery"] = self.dr_cb
        self.producer = Producer(**self.conf)
        self.num_acked = 0
        self.num_sent = 0
        self.num_err = 0
        self.max_msgs = 0

    def dr_cb(self, err: Any, msg: Any) -> None:
        if err:
            self.num_err += 1
            event = {"name": "producer_send_error", "message": str(err), "topic": msg.topic()}
            self.send({**event, "key": msg.key(), "value": msg.value()})
            return
        self.num_acked += 1
        self.send(
            {
                "name": "producer_send_success",
                "topic": msg.topic(),
                "partition": msg.partition(),
                "offset": msg.offset(),
                "key": msg.key(),
                "value": msg.value(),
            }
        )


def _arguments(argv: list[str] | None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description="Verifiable Python Producer")
    parser.add_argument("--topic", type=str, required=True)
    parser.add_argument("--throughput", type=int, default=0)
    parser.add_argument("--broker-list", dest="conf_bootstrap.servers")
    parser.add_argument("--bootstrap-server", dest="conf_bootstrap.servers")
    parser.add_argument("--max-messages", type=int, dest="max_msgs", default=1000000)
    parser.add_argument("--value-prefix", dest="value_prefix", type=str, default=None)
    parser.add_argument("--acks", type=int, dest="topicconf_request.required.acks", default=-1)
    parser.add_argument("--message-create-time", type=int, dest="create_time", default=0)
    parser.add_argument("--repeating-keys", type=int, dest="repeating_keys", default=0)
    parser.add_argument("--producer.config", dest="producer_config")
    parser.add_argument("-X", nargs=1, dest="extra_conf", action="append", help="Configuration property", default=[])
    args = vars(parser.parse_args(argv))
    if args["conf_bootstrap.servers"] is None:
        parser.error("one of --broker-list or --bootstrap-server is required")
    if args.get("producer_config") is not None:
        args.update(VerifiableClient.read_config_file(args["producer_config"]))
    args.update(x[0].split("=", 1) for x in args.get("extra_conf", []))
    return args


def main(argv: list[str] | None = None) -> None:
    args = _arguments(argv)
    conf: dict[str, Any] = {}
    VerifiableClient.set_config(conf, args)
    vp = VerifiableProducer(conf)
    vp.max_msgs = args["max_msgs"]
    topic, repeating_keys = args["topic"], args["repeating_keys"]
    value_fmt = "%d" if args["value_prefix"] is None else args["value_prefix"] + ".%d"
    delay = 1.0 / args["throughput"] if args["throughput"] > 0 else 0.0
    key_counter = 0
    vp.dbg(f"Producing {vp.max_msgs} messages at a rate of {args['throughput']}/s")
    try:
        for i in range(vp.max_msgs):
            if not vp.run:
                break
            t_end = time.time() + delay
            while vp.run:
                key = None
                if repeating_keys:
                    key, key_counter = str(key_counter), (key_counter + 1) % repeating_keys
                try:
                    vp.producer.produce(topic, value=value_fmt % i, key=key, timestamp=args["create_time"])
                    vp.num_sent += 1
                except KafkaException as e:
                    vp.err(f"produce() #{i}/{vp.max_msgs} failed: {e}")
                    vp.num_err += 1
                except BufferError:
                    vp.dbg(f"Local produce queue full (produced {i}/{vp.max_msgs} msgs), waiting for deliveries..")
                    vp.producer.poll(timeout=0.5)
                    continue
                break
            # At the asked rate, serving delivery reports at least once per record.
            while True:
                remaining = max(0.0, t_end - time.time())
                vp.producer.poll(timeout=remaining)
                if remaining <= 1e-8:
                    break
    except KeyboardInterrupt:
        pass
    vp.dbg("Flushing")
    try:
        vp.producer.flush(5)
    except KeyboardInterrupt:
        pass
    vp.send({"name": "shutdown_complete", "_qlen": len(vp.producer)})
    vp.dbg("All done")


if __name__ == "__main__":
    main()
