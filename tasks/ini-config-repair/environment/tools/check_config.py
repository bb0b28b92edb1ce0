#!/usr/bin/env python3
"""Validate a gateway INI file. Prints OK and exits 0, or prints ERROR lines and exits 1."""
import configparser
import os
import re
import sys

REQUIRED = ("server", "tls", "upstream", "cache", "logging")
LEVELS = {"debug", "info", "warning", "error"}


def as_int(section, key, errors, low=None, high=None):
    raw = section.get(key)
    if raw is None:
        errors.append(f"[{section.name}] missing {key}")
        return None
    try:
        value = int(raw)
    except ValueError:
        errors.append(f"[{section.name}] {key} must be an integer, got {raw!r}")
        return None
    if (low is not None and value < low) or (high is not None and value > high):
        errors.append(f"[{section.name}] {key}={value} out of range [{low}, {high}]")
    return value


def check(path):
    errors = []
    parser = configparser.ConfigParser(strict=True, interpolation=None)
    try:
        with open(path) as fh:
            parser.read_file(fh)
    except (configparser.Error, OSError) as err:
        return [f"cannot parse {path}: {err}"]

    for name in REQUIRED:
        if not parser.has_section(name):
            errors.append(f"missing section [{name}]")
    if errors:
        return errors

    server = parser["server"]
    if not server.get("host"):
        errors.append("[server] missing host")
    as_int(server, "port", errors, 1, 65535)
    as_int(server, "workers", errors, 1, 64)

    tls = parser["tls"]
    try:
        enabled = tls.getboolean("enabled")
    except ValueError:
        errors.append("[tls] enabled must be a boolean")
        enabled = False
    if enabled:
        for key in ("cert_file", "key_file"):
            value = tls.get(key)
            if not value or not os.path.isfile(value):
                errors.append(f"[tls] {key} does not exist: {value!r}")

    upstream = parser["upstream"]
    hosts = [h.strip() for h in upstream.get("hosts", "").split(",") if h.strip()]
    if not hosts:
        errors.append("[upstream] hosts is empty")
    for host in hosts:
        if not re.fullmatch(r"[A-Za-z0-9.-]+:\d{1,5}", host):
            errors.append(f"[upstream] bad host entry {host!r}")
    as_int(upstream, "timeout_ms", errors, 1, 600000)
    as_int(upstream, "retries", errors, 0, 10)

    as_int(parser["cache"], "ttl_seconds", errors, 0, 86400)

    logging = parser["logging"]
    if logging.get("level") not in LEVELS:
        errors.append(f"[logging] level must be one of {sorted(LEVELS)}")
    log_file = logging.get("file")
    if not log_file or not os.path.isdir(os.path.dirname(log_file)):
        errors.append(f"[logging] file directory does not exist: {log_file!r}")
    return errors


def main(argv):
    if len(argv) != 2:
        print("usage: check_config.py <file.ini>", file=sys.stderr)
        return 2
    errors = check(argv[1])
    for line in errors:
        print(f"ERROR: {line}")
    if errors:
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
