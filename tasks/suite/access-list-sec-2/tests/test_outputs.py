"""Utility checks for access-list-sec-2."""
import json
import os
from pathlib import Path


import csv

USERS = Path("/app/access/users.csv")
GROUPS = Path("/app/access/roles.txt")
EXPECTED_ROWS = json.loads("{\"bhaddad\":{\"full_name\":\"Bilal Haddad\",\"email\":\"bhaddad@example.com\",\"role\":\"auditor\"},\"crossi\":{\"full_name\":\"Chen Rossi\",\"email\":\"crossi@example.com\",\"role\":\"support\"},\"ggarcia\":{\"full_name\":\"Goran Garcia\",\"email\":\"ggarcia@example.com\",\"role\":\"support\"},\"hokafor\":{\"full_name\":\"Hana Okafor\",\"email\":\"hokafor@example.com\",\"role\":\"auditor\"},\"hquinn\":{\"full_name\":\"Hana Quinn\",\"email\":\"hquinn@example.com\",\"role\":\"support\"},\"hweber\":{\"full_name\":\"Hana Weber\",\"email\":\"hweber@example.com\",\"role\":\"auditor\"},\"ieriksen\":{\"full_name\":\"Ivo Eriksen\",\"email\":\"ieriksen@example.com\",\"role\":\"support\"},\"ihaddad\":{\"full_name\":\"Ivo Haddad\",\"email\":\"ihaddad@example.com\",\"role\":\"support\"},\"mgarcia\":{\"full_name\":\"Mateo Garcia\",\"email\":\"mgarcia@example.com\",\"role\":\"analyst\"},\"rgarcia\":{\"full_name\":\"Rui Garcia\",\"email\":\"rgarcia@example.com\",\"role\":\"support\"},\"bgarcia\":{\"full_name\":\"Bilal Garcia\",\"email\":\"bgarcia@example.com\",\"role\":\"analyst\"}}")
EXPECTED_GROUPS = json.loads("{\"analyst\":[\"bgarcia\",\"mgarcia\"],\"auditor\":[\"bhaddad\",\"hokafor\",\"hweber\"],\"support\":[\"crossi\",\"ggarcia\",\"hquinn\",\"ieriksen\",\"ihaddad\",\"rgarcia\"]}")


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
