#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
cd /app/inventory
python3 - <<'PY'
import re
from pathlib import Path
src = Path("main.c").read_text()
Path("main.c").write_text(re.sub(r"\btotal_cent\(", "total_cents(", src))

PY
make
./inventory
