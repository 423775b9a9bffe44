"""A batch that fails to decode keeps no large buffer alive: an 87-byte zstd batch whose frame claims
128 MiB, decoded six times in a fresh interpreter with the cycle collector off (as it mostly is
between collections of a busy consumer), leaves the process where it started while the answers that
hold the failures are still kept, and each failure is still there to be reported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

_CHILD = textwrap.dedent(
    """
    import gc, json, struct, sys
    sys.path.insert(0, sys.argv[1])
    from tests.unit.records.test_decoding_budget import _v2_batch
    from kafkawire.consumer.decode import batches_of
    from kafkawire.records import ZSTD, DecodeError

    def rss():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024

    # magic, a descriptor with an 8-byte content size (single segment), 128 MiB, then no valid block
    frame = struct.pack("<I", 0xFD2FB528) + bytes([0xE0]) + struct.pack("<Q", 128 << 20) + b"\\x01\\x00\\x00" + b"junk" * 8
    batch = _v2_batch(frame, 1, ZSTD)
    batches_of(batch)  # first-use loading not counted
    gc.disable()
    before = rss()
    kept = [batches_of(batch) for _ in range(6)]
    grown = rss() - before
    failures = [type(k).__name__ for k in kept if isinstance(k, DecodeError)]
    print(json.dumps({"size": len(batch), "grown": grown, "failures": failures}))
    """
)


def test_an_undecodable_batch_leaves_no_buffer_behind_with_the_collector_off() -> None:
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root)], capture_output=True, text=True, check=True, timeout=120
    )
    result = json.loads(out.stdout)
    assert result["size"] < 128
    assert result["failures"] == ["DecodeError"] * 6
    assert result["grown"] < 8 << 20  # six 128 MiB buffers were kept before (769 MiB)
