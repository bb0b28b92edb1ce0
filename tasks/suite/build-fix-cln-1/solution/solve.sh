#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
cd /app/orders
python3 - <<'PY'
import re
from pathlib import Path
src = Path("main.c").read_text()
Path("main.c").write_text(src.replace("#include <stdio.h>\n", '#include <stdio.h>\n#include "calc.h"\n', 1))

PY
make
./orders
