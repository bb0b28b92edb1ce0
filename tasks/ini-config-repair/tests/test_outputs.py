"""Utility checks for ini-config-repair."""
import configparser
import hashlib
import subprocess
from pathlib import Path

CONFIG = Path("/app/config/gateway.ini")
CHECKER = Path("/app/tools/check_config.py")
CHECKER_SHA256 = "afb917a7088a18695be395ca2ea869ae9201a344afc401c33370601561b46f63"


def load():
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    parser.read_string(CONFIG.read_text())
    return parser


def test_checker_untouched():
    assert hashlib.sha256(CHECKER.read_bytes()).hexdigest() == CHECKER_SHA256


def test_checker_passes():
    out = subprocess.run(
        ["python3", str(CHECKER), str(CONFIG)], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip() == "OK"


def test_intended_values():
    cfg = load()
    assert cfg.getint("server", "port") == 8443
    assert cfg.getint("server", "workers") == 4
    assert cfg.getboolean("tls", "enabled") is True
    assert cfg.get("tls", "cert_file") == "/app/certs/gateway.pem"
    assert cfg.get("tls", "key_file") == "/app/certs/gateway.key"
    assert cfg.getint("upstream", "timeout_ms") == 2500
    assert cfg.get("logging", "level") == "info"
    assert cfg.get("logging", "file") == "/app/logs/gateway.log"


def test_other_values_kept():
    cfg = load()
    assert cfg.get("server", "host") == "0.0.0.0"
    hosts = [h.strip() for h in cfg.get("upstream", "hosts").split(",")]
    assert hosts == ["api-1.internal:9000", "api-2.internal:9000"]
    assert cfg.getint("upstream", "retries") == 2
    assert cfg.getint("cache", "ttl_seconds") == 300


def test_comments_kept():
    lines = CONFIG.read_text().splitlines()
    assert lines[0] == "; gateway service configuration"
    assert "; owner: platform team" in lines[:3]
