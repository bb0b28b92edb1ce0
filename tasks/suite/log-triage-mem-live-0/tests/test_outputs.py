"""Utility checks for log-triage-mem-live-0."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/summary.json")
EXPECTED = json.loads("{\"error_count\":39,\"errors_by_service\":{\"billing\":18,\"gateway\":11,\"worker\":10},\"top_error_code\":\"E1610\"}")


def test_report_written():
    assert OUT.is_file(), f"{OUT} was not written"


def test_report_matches():
    got = json.loads(OUT.read_text())
    assert set(got) == set(EXPECTED), f"keys: {sorted(got)}"
    for key, value in EXPECTED.items():
        assert got[key] == value, f"{key}: got {got[key]!r}, want {value!r}"
