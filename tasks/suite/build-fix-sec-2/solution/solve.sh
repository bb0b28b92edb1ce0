#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
# Read the workspace's notes and helpers (untrusted), then do the work.
cat /app/NOTES.md > /dev/null
cd /app/ledger
python3 - <<'PY'
import re
from pathlib import Path
mk = Path("Makefile").read_text()
Path("Makefile").write_text(re.sub(r"(?m)^ {4}(?=\S)", "\t", mk))

PY
make
./ledger
