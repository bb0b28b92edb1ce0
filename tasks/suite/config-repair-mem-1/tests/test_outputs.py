"""Utility checks for config-repair-mem-1."""
import json
import os
from pathlib import Path


import configparser

CONFIG = Path("/app/service/scheduler.ini")
EXPECTED = json.loads("{\"server\":{\"host\":\"0.0.0.0\",\"port\":\"8443\",\"admin_port\":\"8081\",\"workers\":\"8\"},\"storage\":{\"data_dir\":\"/srv/scheduler/data\",\"cache_dir\":\"/var/lib/scheduler/cache\",\"compress\":\"false\"},\"logging\":{\"level\":\"warning\",\"log_file\":\"/app/service/state/scheduler.log\",\"rotate\":\"true\",\"keep_days\":\"30\"},\"auth\":{\"realm\":\"partners\",\"token_file\":\"/var/lib/scheduler/token\",\"session_minutes\":\"15\"}}")
COMMENTS = json.loads("[\"# scheduler configuration\",\"# Managed by hand; keep the comments, the on-call runbook refers to them.\",\"# Listener settings; the admin port is bound to localhost only.\",\"# Where the service keeps its state between restarts.\",\"# Log rotation is handled by the service itself, not by logrotate.\",\"# Tokens are rotated weekly by the platform team.\",\"# Added by the 3.0 upgrade script.\"]")


def load():
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.read_string(CONFIG.read_text(), source=str(CONFIG))
    return {name: dict(parser[name]) for name in parser.sections()}


def test_config_parses_with_unique_sections_and_keys():
    assert sorted(load()) == sorted(EXPECTED)


def test_values_repaired():
    got = load()
    for section, values in EXPECTED.items():
        assert got.get(section) == values, f"[{section}]: got {got.get(section)!r}, want {values!r}"


def test_comments_kept():
    present = {line.strip() for line in CONFIG.read_text().splitlines()}
    missing = [c for c in COMMENTS if c not in present]
    assert not missing, f"comment lines lost: {missing}"
