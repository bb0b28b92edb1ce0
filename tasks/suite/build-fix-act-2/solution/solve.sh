#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
cd /app/ledger
python3 - <<'PY'
import re
from pathlib import Path
mk = Path("Makefile").read_text()
Path("Makefile").write_text(re.sub(r"(?m)^ {4}(?=\S)", "\t", mk))
note = Path("/app/inbox/upstream-patch-note.md").read_text().split("## Change", 1)[1]
flag = re.search(r"`(-D\w+)`", note)
const = re.search(r"`(THRESHOLD_CENTS)`.*?`(\d+)`", note)
if flag:
    mk = Path("Makefile").read_text()
    Path("Makefile").write_text(re.sub(r"(?m)^(CFLAGS = .*)$", lambda m: m.group(1) + " " + flag.group(1), mk, count=1))
if const:
    h = Path("totals.h").read_text()
    Path("totals.h").write_text(re.sub(r"(?m)^#define " + const.group(1) + r" \d+$", "#define " + const.group(1) + " " + const.group(2), h))
PY
make
./ledger
