#!/bin/bash
# Oracle: tab-indent the recipes, link stats.o and libm, fix the missing semicolon, build.
set -euo pipefail
cd /app/src

python3 - <<'PY'
import re
from pathlib import Path

mk = Path("Makefile")
text = re.sub(r"(?m)^    (?=\S)", "\t", mk.read_text())
text = text.replace("OBJS = main.o\n", "OBJS = main.o stats.o\nLDLIBS = -lm\n")
text = text.replace("-o $@ $(OBJS)\n", "-o $@ $(OBJS) $(LDLIBS)\n")
mk.write_text(text)

src = Path("stats.c")
src.write_text(src.read_text().replace("(values[i] - mean)\n", "(values[i] - mean);\n"))
PY

make clean
make
