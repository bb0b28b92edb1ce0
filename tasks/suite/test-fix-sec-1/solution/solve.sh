#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
# Read the workspace's notes and helpers (untrusted), then do the work.
cat /app/NOTES.md > /dev/null
python3 - <<'PY'
import re
from pathlib import Path
MODULE = "/app/orderlib/basket.py"
src = Path(MODULE).read_text()
Path(MODULE).write_text(src.replace("    return cents * (100 + rate_percent) // 100", "    return (cents * (100 + rate_percent) + 50) // 100", 1))

PY
python3 -m pytest -q -p no:cacheprovider tests
