"""``python -m bench``: see bench/README.md; ``python -m bench scale``: the scale curves (bench/scale.py)."""

import sys

if sys.argv[1:2] == ["scale"]:
    from bench.scale import main as scale

    sys.exit(scale(sys.argv[2:]))

from bench.run import main

sys.exit(main())
