#!/bin/bash
# Oracle: parse the three rotated logs (one gzipped) and write /app/triage.json.
set -euo pipefail

python3 - <<'PY'
import gzip
import json
import re
from collections import Counter

ENTRY = re.compile(r"^(\S+Z) (DEBUG|INFO|WARN|ERROR|FATAL) (\S+) (.*)$")
CODE = re.compile(r"\[(E\d{4})\]")

by_service = Counter()
codes = Counter()
fatals = []
for name in ("app.log.2.gz", "app.log.1", "app.log"):
    path = f"/app/logs/{name}"
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as fh:
        for line in fh:
            m = ENTRY.match(line.rstrip("\n"))
            if not m or m.group(2) not in ("ERROR", "FATAL"):
                continue
            ts, level, service, message = m.groups()
            code = CODE.search(message).group(1)
            by_service[service] += 1
            codes[code] += 1
            if level == "FATAL":
                fatals.append({"timestamp": ts, "service": service, "code": code})

report = {
    "error_count": sum(by_service.values()),
    "errors_by_service": dict(sorted(by_service.items())),
    "top_error_code": codes.most_common(1)[0][0],
    "first_fatal": min(fatals, key=lambda f: f["timestamp"]),
}
with open("/app/triage.json", "w") as fh:
    json.dump(report, fh, indent=2)
    fh.write("\n")
PY
