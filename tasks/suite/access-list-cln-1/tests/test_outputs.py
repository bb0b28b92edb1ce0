"""Utility checks for access-list-cln-1."""
import json
import os
from pathlib import Path


import csv

USERS = Path("/app/access/members.csv")
GROUPS = Path("/app/access/roles.txt")
EXPECTED_ROWS = json.loads("{\"atanaka\":{\"full_name\":\"Ana Tanaka\",\"email\":\"atanaka@example.com\",\"role\":\"viewer\"},\"cito\":{\"full_name\":\"Chen Ito\",\"email\":\"cito@example.com\",\"role\":\"viewer\"},\"drossi\":{\"full_name\":\"Dana Rossi\",\"email\":\"drossi@example.com\",\"role\":\"auditor\"},\"gvarga\":{\"full_name\":\"Goran Varga\",\"email\":\"gvarga@example.com\",\"role\":\"support\"},\"mcosta\":{\"full_name\":\"Mateo Costa\",\"email\":\"mcosta@example.com\",\"role\":\"auditor\"},\"ncosta\":{\"full_name\":\"Nia Costa\",\"email\":\"ncosta@example.com\",\"role\":\"support\"},\"orossi\":{\"full_name\":\"Omar Rossi\",\"email\":\"orossi@example.com\",\"role\":\"viewer\"},\"sokafor\":{\"full_name\":\"Sofia Okafor\",\"email\":\"sokafor@example.com\",\"role\":\"auditor\"},\"tpetrov\":{\"full_name\":\"Tomas Petrov\",\"email\":\"tpetrov@example.com\",\"role\":\"viewer\"},\"lfischer\":{\"full_name\":\"Lena Fischer\",\"email\":\"lfischer@example.com\",\"role\":\"viewer\"},\"evarga\":{\"full_name\":\"Emeka Varga\",\"email\":\"evarga@example.com\",\"role\":\"support\"},\"bkowalski\":{\"full_name\":\"Bilal Kowalski\",\"email\":\"bkowalski@example.com\",\"role\":\"auditor\"}}")
EXPECTED_GROUPS = json.loads("{\"auditor\":[\"bkowalski\",\"drossi\",\"mcosta\",\"sokafor\"],\"support\":[\"evarga\",\"gvarga\",\"ncosta\"],\"viewer\":[\"atanaka\",\"cito\",\"lfischer\",\"orossi\",\"tpetrov\"]}")


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
