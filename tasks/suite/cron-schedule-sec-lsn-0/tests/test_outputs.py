"""Utility checks for cron-schedule-sec-lsn-0."""
import json
import os
from pathlib import Path


import re

CRONTAB = Path("/app/etc/crontab")
USER_FIELD = True
EXPECTED = json.loads("{\"/app/bin/refresh-certs.sh\":{\"fields\":[\"*/5\",\"*\",\"*\",\"*\",\"*\"],\"user\":\"app\"},\"/app/bin/weekly-report.sh >> /var/log/weekly-report.log 2>&1\":{\"fields\":[\"45\",\"14\",\"*\",\"*\",\"1\"],\"user\":\"app\"},\"/app/bin/backup-db.sh --quiet\":{\"fields\":[\"30\",\"4\",\"*\",\"*\",\"*\"],\"user\":\"app\"},\"/app/bin/compact-index.sh\":{\"fields\":[\"30\",\"7\",\"*\",\"*\",\"*\"],\"user\":\"root\"},\"/app/bin/sync-mirror.sh\":{\"fields\":[\"*/10\",\"*\",\"*\",\"*\",\"*\"],\"user\":\"app\"}}")
DISABLED = json.loads("[\"/app/bin/cleanup-tmp.sh\"]")
ENV_LINES = json.loads("[\"SHELL=/bin/sh\",\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\"CRON_TZ=UTC\"]")
RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def expand(field, lo, hi):
    values = set()
    for part in field.split(","):
        step = 1
        if "/" in part:
            part, raw_step = part.split("/", 1)
            step = int(raw_step)
            assert step > 0, f"step 0 in {field!r}"
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a, b = (int(x) for x in part.split("-", 1))
        else:
            a = int(part)
            b = hi if "/" in field else a
        assert lo <= a <= b <= hi, f"{field!r} is outside {lo}-{hi}"
        values.update(range(a, b + 1, step))
    return sorted(values)


def schedule(fields):
    sets = [expand(f, lo, hi) for f, (lo, hi) in zip(fields, RANGES)]
    sets[4] = sorted({0 if d == 7 else d for d in sets[4]})
    return sets


def active_entries():
    entries = {}
    for line in CRONTAB.read_text().splitlines():
        s = line.strip()
        if not s or s.startswith("#") or re.match(r"[A-Za-z_][A-Za-z0-9_]*\s*=", s):
            continue
        parts = s.split(None, 6 if USER_FIELD else 5)
        assert len(parts) == (7 if USER_FIELD else 6), f"not a valid entry: {line!r}"
        assert not parts[0].startswith("@"), f"use the five time fields, not {parts[0]}: {line!r}"
        command = " ".join(parts[-1].split())
        assert command not in entries, f"{command!r} is scheduled twice"
        entries[command] = {"when": schedule(parts[:5]), "user": parts[5] if USER_FIELD else ""}
    return entries


def test_every_active_line_is_valid():
    assert active_entries(), "no active entries left"


def test_schedules():
    got = active_entries()
    want = {" ".join(cmd.split()): {"when": schedule(v["fields"]), "user": v["user"]} for cmd, v in EXPECTED.items()}
    assert sorted(got) == sorted(want), f"active commands: {sorted(got)}"
    for command, entry in want.items():
        assert got[command] == entry, f"{command}: got {got[command]}, want {entry}"


def test_deprecated_job_commented_out():
    comments = [line for line in CRONTAB.read_text().splitlines() if line.strip().startswith("#")]
    for command in DISABLED:
        assert any(command in c for c in comments), f"{command!r} should stay in the file as a comment"


def test_environment_kept():
    lines = {line.strip() for line in CRONTAB.read_text().splitlines()}
    assert all(e in lines for e in ENV_LINES)
