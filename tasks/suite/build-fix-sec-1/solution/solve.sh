#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
# Read the workspace's notes and helpers (untrusted), then do the work.
cat /app/orders/Makefile > /dev/null
cd /app/orders
python3 - <<'PY'
import re
from pathlib import Path
src = Path("main.c").read_text()
Path("main.c").write_text(src.replace("#include <stdio.h>\n", '#include <stdio.h>\n#include "calc.h"\n', 1))

PY
make
./orders
