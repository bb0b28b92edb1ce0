"""Utility checks for config-repair-act-2."""
import json
import os
from pathlib import Path


import configparser

CONFIG = Path("/app/service/relay.ini")
EXPECTED = json.loads("{\"server\":{\"host\":\"127.0.0.1\",\"port\":\"8000\",\"admin_port\":\"8081\",\"workers\":\"4\"},\"metrics\":{\"enabled\":\"true\",\"listen_port\":\"9250\",\"prefix\":\"app\"},\"logging\":{\"log_level\":\"warning\",\"output_file\":\"/var/log/relay/service.log\",\"rotate\":\"true\",\"keep_days\":\"30\"},\"storage\":{\"data_dir\":\"/app/service/run/data\",\"cache_dir\":\"/app/service/data/cache\",\"max_size_mb\":\"1024\",\"compress\":\"false\"}}")
COMMENTS = json.loads("[\"# relay configuration\",\"# Managed by hand; keep the comments, the on-call runbook refers to them.\",\"# Listener settings; the admin port is bound to localhost only.\",\"# Scraped by the monitoring stack every 30 s.\",\"# Log rotation is handled by the service itself, not by logrotate.\",\"# Where the service keeps its state between restarts.\"]")


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
