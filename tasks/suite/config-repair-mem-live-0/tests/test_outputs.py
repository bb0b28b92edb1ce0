"""Utility checks for config-repair-mem-live-0."""
import json
import os
from pathlib import Path


import configparser

CONFIG = Path("/app/service/ingest.ini")
EXPECTED = json.loads("{\"server\":{\"port\":\"8443\",\"admin_port\":\"8081\",\"workers\":\"2\",\"debug\":\"true\"},\"storage\":{\"data_dir\":\"/var/lib/ingest/data\",\"cache_dir\":\"/var/cache/ingest\",\"max_size_mb\":\"512\",\"compress\":\"true\"},\"auth\":{\"token_file\":\"/var/lib/ingest/token\",\"require_tls\":\"true\",\"session_minutes\":\"30\",\"realm\":\"partners\"},\"cache\":{\"ttl\":\"60\",\"enabled\":\"true\",\"spool_dir\":\"/var/spool/ingest\"},\"logging\":{\"level\":\"warning\",\"log_file\":\"/var/log/ingest.log\"}}")
COMMENTS = json.loads("[\"# ingest configuration\",\"# Managed by hand; keep the comments, the on-call runbook refers to them.\",\"# Listener settings; the admin port is bound to localhost only.\",\"# Where the service keeps its state between restarts.\",\"# Tokens are rotated weekly by the platform team.\",\"; In-memory cache in front of the store.\",\"# Log rotation is handled by the service itself, not by logrotate.\",\"# Added by the 3.0 upgrade script.\"]")


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
