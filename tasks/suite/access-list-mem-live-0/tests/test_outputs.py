"""Utility checks for access-list-mem-live-0."""
import json
import os
from pathlib import Path


import csv

USERS = Path("/app/access/members.csv")
GROUPS = Path("/app/access/roles.txt")
EXPECTED_ROWS = json.loads("{\"gpetrov\":{\"full_name\":\"Goran Petrov\",\"email\":\"gpetrov@example.com\",\"role\":\"analyst\"},\"llarsen\":{\"full_name\":\"Lena Larsen\",\"email\":\"llarsen@example.com\",\"role\":\"support\"},\"njovanovic\":{\"full_name\":\"Nia Jovanovic\",\"email\":\"njovanovic@example.com\",\"role\":\"developer\"},\"ocosta\":{\"full_name\":\"Omar Costa\",\"email\":\"ocosta@example.com\",\"role\":\"developer\"},\"olarsen\":{\"full_name\":\"Omar Larsen\",\"email\":\"olarsen@example.com\",\"role\":\"developer\"},\"rcosta\":{\"full_name\":\"Rui Costa\",\"email\":\"rcosta@example.com\",\"role\":\"auditor\"},\"uweber\":{\"full_name\":\"Uma Weber\",\"email\":\"uweber@example.com\",\"role\":\"auditor\"},\"uabebe\":{\"full_name\":\"Uma Abebe\",\"email\":\"uabebe@example.com\",\"role\":\"support\"},\"cjovanovic\":{\"full_name\":\"Chen Jovanovic\",\"email\":\"cjovanovic@example.com\",\"role\":\"auditor\"}}")
EXPECTED_GROUPS = json.loads("{\"analyst\":[\"gpetrov\"],\"auditor\":[\"cjovanovic\",\"rcosta\",\"uweber\"],\"developer\":[\"njovanovic\",\"ocosta\",\"olarsen\"],\"support\":[\"llarsen\",\"uabebe\"]}")


def test_user_rows():
    with USERS.open(newline="") as f:
        rows = list(csv.DictReader(f))
    got = {r["username"]: {k: r[k] for k in ("full_name", "email", "role")} for r in rows}
    assert len(got) == len(rows), "a username appears twice"
    assert sorted(got) == sorted(EXPECTED_ROWS), f"usernames: {sorted(got)}"
    for name, want in EXPECTED_ROWS.items():
        assert got[name] == want, f"{name}: got {got[name]}, want {want}"


def test_groups_regenerated():
    got = {}
    for line in GROUPS.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        role, _, members = line.partition(":")
        got[role.strip()] = sorted(m.strip() for m in members.split(",") if m.strip())
    assert got == EXPECTED_GROUPS
