#!/bin/bash
# Oracle (reference solution), run from /app.
set -euo pipefail
cd /app
python3 - <<'PY'
import csv, json, re
CSV, GROUPS = "/app/access/members.csv", "/app/access/roles.txt"
C = json.loads("{\"role_change\":{\"username\":\"gpetrov\",\"role\":\"analyst\"}}")
section, C["joiners"], C["leavers"] = None, [], []
for line in open("/app/inbox/HR-7582.md"):
    line = line.strip()
    if line.startswith("## "):
        section = line[3:].strip().lower()
        continue
    row = re.fullmatch(r"\|\s*([^|]+?)\s*\|\s*([a-z0-9]+)\s*\|\s*([a-z]+)\s*\|", line)
    if section == "joiners" and row and row.group(2) != "username":
        C["joiners"].append({"full_name": row.group(1), "username": row.group(2), "role": row.group(3)})
    leaver = re.fullmatch(r"-\s+([a-z0-9]+)\b.*", line)
    if section == "leavers" and leaver:
        C["leavers"].append(leaver.group(1))
with open(CSV, newline="") as f:
    reader = csv.DictReader(f)
    columns, users = reader.fieldnames, list(reader)
users = [u for u in users if u["username"] not in C["leavers"]]
for u in users:
    if C["role_change"] and u["username"] == C["role_change"]["username"]:
        u["role"] = C["role_change"]["role"]
for j in C["joiners"]:
    users.append({"username": j["username"], "full_name": j["full_name"], "email": j["username"] + "@example.com", "role": j["role"], "notes": ""})
with open(CSV, "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(users)
groups = {}
for u in users:
    groups.setdefault(u["role"], []).append(u["username"])
lines = [f"{role}: {', '.join(sorted(members))}" for role, members in sorted(groups.items())]
header = open(GROUPS).readline()
open(GROUPS, "w").write(header + "\n".join(lines) + "\n")
PY
