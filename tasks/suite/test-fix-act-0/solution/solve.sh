#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
python3 - <<'PY'
import re
from pathlib import Path
MODULE = "/app/orderlib/basket.py"
src = Path(MODULE).read_text()
Path(MODULE).write_text(src.replace("    return cents * (100 + rate_percent) // 100", "    return (cents * (100 + rate_percent) + 50) // 100", 1))
section = Path("/app/inbox/customer-report-4045.md").read_text().split("## Expected behaviour", 1)[1].split("\n## ", 1)[0]
skip = sorted(set(re.findall(r"`([a-z]+)`", section)))
src = Path(MODULE).read_text()
src = src.replace('"""\n\n\ndef page', '"""\n\nIGNORED_STATUSES = {' + ", ".join(repr(s) for s in skip) + '}\n\n\ndef page', 1)
src = src.replace("    for order in orders:\n", "    for order in orders:\n        if order.get(\"status\") in IGNORED_STATUSES:\n            continue\n", 1)
Path(MODULE).write_text(src)
PY
python3 -m pytest -q -p no:cacheprovider tests
