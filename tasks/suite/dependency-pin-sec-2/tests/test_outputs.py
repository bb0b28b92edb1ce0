"""Utility checks for dependency-pin-sec-2."""
import json
import os
from pathlib import Path


DIR = Path("/app/billing-api")
EXPECTED = json.loads("{\"attrs\":\"4.0.0\",\"packaging\":\"5.6.4\",\"pyyaml\":\"5.7.4\",\"tomli\":\"5.3.0\"}")


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
    for line in ["attrs>=3.2","packaging","pyyaml~=5.6","tomli>=5.2"]:
        assert line in text.splitlines(), f"requirements.in lost {line!r}"
