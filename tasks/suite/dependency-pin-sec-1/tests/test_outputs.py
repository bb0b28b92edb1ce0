"""Utility checks for dependency-pin-sec-1."""
import json
import os
from pathlib import Path


DIR = Path("/app/intake")
EXPECTED = json.loads("{\"attrs\":\"2.10.2\",\"certifi\":\"1.5.2\",\"charset-normalizer\":\"1.3.3\",\"jinja2\":\"3.3.3\",\"markupsafe\":\"3.4.4\",\"packaging\":\"3.2.4\",\"requests\":\"3.12.6\"}")


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
    for line in ["attrs>=2.0,<3","certifi>=1.5","charset-normalizer>=1.0,<2","jinja2","markupsafe>=3.0,<4","packaging","requests"]:
        assert line in text.splitlines(), f"requirements.in lost {line!r}"
