"""Utility checks for log-triage."""
import json
from pathlib import Path

import pytest

TRIAGE = Path("/app/triage.json")


@pytest.fixture(scope="module")
def triage():
    assert TRIAGE.is_file(), "triage.json was not written"
    return json.loads(TRIAGE.read_text())


def test_keys(triage):
    assert set(triage) == {"error_count", "errors_by_service", "top_error_code", "first_fatal"}


def test_error_count(triage):
    # Tracebacks repeat the code and DEBUG lines mention "ERROR"; neither is an entry.
    assert triage["error_count"] == 144


def test_by_service(triage):
    assert triage["errors_by_service"] == {"api": 35, "auth": 37, "billing": 40, "worker": 32}


def test_top_code(triage):
    assert triage["top_error_code"] == "E2001"


def test_first_fatal(triage):
    assert triage["first_fatal"] == {
        "timestamp": "2024-05-14T01:55:39Z",
        "service": "billing",
        "code": "E3002",
    }


def test_logs_untouched():
    names = sorted(p.name for p in Path("/app/logs").iterdir())
    assert names == ["app.log", "app.log.1", "app.log.2.gz"]
