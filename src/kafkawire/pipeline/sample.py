"""The bundled sample dataset: web-shop orders as JSON lines, generated here and shipped as package data.

``generate_orders`` is deterministic (its own linear congruential generator, no ``random``), so
``scripts/generate_sample_data.py`` rewrites ``data/orders.jsonl`` byte for byte, and a test checks
that the shipped file is what the generator makes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any

SAMPLE_ROWS = 5000
SAMPLE_FILE = "orders.jsonl"

_PRODUCTS = (
    ("KET-100", 3499),  # kettle
    ("LMP-210", 2450),  # desk lamp
    ("DSK-300", 38900),  # standing desk
    ("CHR-310", 17900),  # office chair
    ("MUG-020", 899),
    ("RUG-400", 12900),
    ("SHF-150", 8900),  # bookshelf
    ("PIL-030", 1599),  # cushion
    ("CLK-050", 2999),  # wall clock
    ("PLT-060", 1299),  # plant pot
)
_COUNTRIES = (("DE", "EUR"), ("FR", "EUR"), ("NL", "EUR"), ("GB", "GBP"), ("US", "USD"), ("SE", "SEK"), ("PL", "PLN"))
_STATUSES = ("placed", "placed", "paid", "paid", "paid", "shipped", "shipped", "delivered", "cancelled")
_PAYMENTS = ("card", "card", "card", "paypal", "invoice", "bank_transfer")
_CUSTOMERS = 431
_START = datetime(2024, 3, 1, 8, 0, 0, tzinfo=timezone.utc)


class _Lcg:
    """Knuth's MMIX linear congruential generator: the same numbers on every Python."""

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFFFFFFFFFF

    def below(self, bound: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        return (self.state >> 33) % bound


def generate_orders(count: int = SAMPLE_ROWS, seed: int = 20240301) -> Iterator[dict[str, Any]]:
    """``count`` orders in time order: a customer, one to three line items, a total, a status."""
    rng = _Lcg(seed)
    at = _START
    for n in range(1, count + 1):
        at += timedelta(seconds=5 + rng.below(170))
        customer = rng.below(_CUSTOMERS)
        country, currency = _COUNTRIES[customer % len(_COUNTRIES)]
        lines = []  # (sku, quantity, unit price in cents)
        for _ in range(1 + rng.below(3)):
            sku, price = _PRODUCTS[rng.below(len(_PRODUCTS))]
            lines.append((sku, 1 + rng.below(3), price))
        items = [{"sku": sku, "quantity": quantity, "unit_price": price / 100} for sku, quantity, price in lines]
        total_cents = sum(price * quantity for _sku, quantity, price in lines)
        coupon = f"SPRING{5 * (1 + rng.below(4))}" if rng.below(10) == 0 else None
        if coupon is not None:
            total_cents -= total_cents * int(coupon[6:]) // 100
        yield {
            "order_id": f"ord-{n:06d}",
            "customer_id": f"cust-{customer:04d}",
            "created_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "status": _STATUSES[rng.below(len(_STATUSES))],
            "country": country,
            "currency": currency,
            "payment_method": _PAYMENTS[rng.below(len(_PAYMENTS))],
            "items": items,
            "item_count": sum(quantity for _sku, quantity, _price in lines),
            "total": total_cents / 100,
            "coupon": coupon,
            "express": rng.below(5) == 0,
        }


def orders_jsonl(count: int = SAMPLE_ROWS) -> str:
    """The sample file's exact text: one compact JSON object per line."""
    return "".join(json.dumps(order, separators=(",", ":")) + "\n" for order in generate_orders(count))


def sample_path() -> Path:
    """Where the installed sample dataset is (a plain file inside the package)."""
    path = Path(str(resources.files("kafkawire.pipeline") / "data" / SAMPLE_FILE))
    if not path.is_file():
        raise FileNotFoundError(
            f"the sample dataset is missing at {path}; reinstall kafkawire or run scripts/generate_sample_data.py"
        )
    return path
