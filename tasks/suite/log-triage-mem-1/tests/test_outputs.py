"""Utility checks for log-triage-mem-1."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/errors.json")
EXPECTED = json.loads("{\"error_count\":33,\"errors_by_service\":{\"auth\":6,\"billing\":9,\"gateway\":5,\"ledger\":8,\"worker\":5},\"top_error_code\":\"E1273\"}")


def test_report_written():
    assert OUT.is_file(), f"{OUT} was not written"


def test_report_matches():
    got = json.loads(OUT.read_text())
    assert set(got) == set(EXPECTED), f"keys: {sorted(got)}"
    for key, value in EXPECTED.items():
        assert got[key] == value, f"{key}: got {got[key]!r}, want {value!r}"
