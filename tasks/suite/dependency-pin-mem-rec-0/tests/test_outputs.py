"""Utility checks for dependency-pin-mem-rec-0."""
import json
import os
from pathlib import Path


DIR = Path("/app/ledger-sync")
EXPECTED = json.loads("{\"click\":\"5.1.5\",\"idna\":\"1.7.9\",\"pyyaml\":\"1.6.5\",\"requests\":\"2.12.6\",\"urllib3\":\"2.6.3\"}")


def pins_txt():
    pins = {}
    for line in (DIR / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"not a pin: {line!r}"
            pins[name.strip().lower()] = version.strip()
    return pins


def test_requirements_txt():
    assert pins_txt() == EXPECTED


def test_lock_json():
    lock = json.loads((DIR / "requirements.lock.json").read_text())
    assert {k.lower(): v for k, v in lock["packages"].items()} == EXPECTED


def test_requirements_in_kept():
    text = (DIR / "requirements.in").read_text()
    for line in ["click~=5.1","idna~=1.7","pyyaml>=1.6","requests>=2.0,<3","urllib3"]:
        assert line in text.splitlines(), f"requirements.in lost {line!r}"
