"""Write the bundled sample dataset (src/kafkawire/pipeline/data/orders.jsonl) from its generator.

    python scripts/generate_sample_data.py            # rewrite the shipped file
    python scripts/generate_sample_data.py --rows 100000 --out /tmp/orders.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kafkawire.pipeline.sample import SAMPLE_FILE, SAMPLE_ROWS, orders_jsonl

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "kafkawire" / "pipeline" / "data" / SAMPLE_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=SAMPLE_ROWS, help=f"orders to generate (default {SAMPLE_ROWS})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="file to write (default: the shipped one)")
    args = parser.parse_args()
    args.out.write_text(orders_jsonl(args.rows), encoding="utf-8")
    print(f"wrote {args.rows} orders to {args.out}")


if __name__ == "__main__":
    main()
