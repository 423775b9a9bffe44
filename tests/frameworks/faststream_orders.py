"""A FastStream service written for confluent-kafka (``faststream.confluent``): a billing subscriber
turns orders into invoices and publishes them; a ledger subscriber reads invoices in batches. The
program publishes the orders itself, stops once the ledger has them all and prints what it saw. The
test runs it twice, plainly and under ``python -m kafkawire.run``, and compares the output.

usage: faststream_orders.py BROKER ORDERS_TOPIC INVOICES_TOPIC GROUP ORDERS
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections import defaultdict

import confluent_kafka
from faststream.confluent import KafkaBroker, KafkaMessage
from pydantic import BaseModel

CUSTOMERS = ("ada", "grace", "edsger", "barbara")


class Order(BaseModel):
    order_id: int
    customer: str
    quantity: int
    unit_price: float


class Invoice(BaseModel):
    order_id: int
    customer: str
    total: float
    source: str


async def main(bootstrap: str, orders: str, invoices: str, group: str, count: int) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)  # stdout carries the result alone
    broker = KafkaBroker(bootstrap, client_id="billing-service", logger=logging.getLogger("billing"))
    seen: list[Invoice] = []
    per_customer: dict[str, list[int]] = defaultdict(list)
    complete = asyncio.Event()

    @broker.subscriber(orders, group_id=f"{group}-billing", auto_offset_reset="earliest")
    @broker.publisher(invoices)
    async def bill(order: Order, message: KafkaMessage) -> Invoice:
        total = round(order.quantity * order.unit_price, 2)
        return Invoice(order_id=order.order_id, customer=order.customer, total=total, source=message.headers["source"])

    @broker.subscriber(invoices, group_id=f"{group}-ledger", auto_offset_reset="earliest", batch=True)
    async def ledger(batch: list[Invoice]) -> None:
        for invoice in batch:
            seen.append(invoice)
            per_customer[invoice.customer].append(invoice.order_id)
        if len(seen) >= count:
            complete.set()

    print("client library:", confluent_kafka.__name__, file=sys.stderr)  # the test checks which one ran
    async with broker:
        await broker.start()
        for i in range(count):
            order = Order(order_id=i, customer=CUSTOMERS[i % 4], quantity=1 + i % 5, unit_price=2.5 + i % 3)
            await broker.publish(order, orders, key=order.customer.encode(), headers={"source": "web"})
        await asyncio.wait_for(complete.wait(), timeout=60)
    for invoice in sorted(seen, key=lambda inv: inv.order_id):
        print(json.dumps(invoice.model_dump(), sort_keys=True))
    print(json.dumps(dict(sorted(per_customer.items()))))  # each customer's invoices in the order the ledger read them


if __name__ == "__main__":
    bootstrap, orders, invoices, group, count = sys.argv[1:]
    asyncio.run(main(bootstrap, orders, invoices, group, int(count)))
