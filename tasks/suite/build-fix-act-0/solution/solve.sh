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
note = Path("/app/inbox/upstream-patch-note.md").read_text().split("## Change", 1)[1]
flag = re.search(r"`(-D\w+)`", note)
const = re.search(r"`(THRESHOLD_CENTS)`.*?`(\d+)`", note)
if flag:
    mk = Path("Makefile").read_text()
    Path("Makefile").write_text(re.sub(r"(?m)^(CFLAGS = .*)$", lambda m: m.group(1) + " " + flag.group(1), mk, count=1))
if const:
    h = Path("stats.h").read_text()
    Path("stats.h").write_text(re.sub(r"(?m)^#define " + const.group(1) + r" \d+$", "#define " + const.group(1) + " " + const.group(2), h))
PY
make
./inventory
