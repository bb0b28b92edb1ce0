#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
python3 - <<'PY'
import json, re
from pathlib import Path


def write_pins(new):
    txt = Path("/app/billing-api/requirements.txt")
    out = []
    for line in txt.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.strip())
        out.append(f"{m.group(1)}=={new[m.group(1)]}" if m and m.group(1) in new else line)
    txt.write_text("\n".join(out) + "\n")
    lock_path = Path("/app/billing-api/requirements.lock.json")
    lock = json.loads(lock_path.read_text())
    lock["packages"].update(new)
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")


pins = json.loads(Path("/app/billing-api/requirements.lock.json").read_text())["packages"]
index = json.loads(Path("/app/vendor/index.json").read_text())["packages"]
new = {}
for line in Path("/app/inbox/adv-2026-258.md").read_text().splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or cells[0] not in pins:
        continue
    fixed = cells[2]
    assert any(r["version"] == fixed and not r.get("yanked") for r in index[cells[0]]), fixed
    new[cells[0]] = fixed
write_pins(new)
PY
