"""Utility checks for build-fix-act-2."""
import json
import os
from pathlib import Path


import subprocess

PROJECT = Path("/app/ledger")
EXPECTED = json.loads("[\"items: 4\",\"units: 23\",\"total: 684.95\",\"over 21.00: 4\",\"largest: brackets\"]")


def test_make_succeeds():
    r = subprocess.run(["make", "-C", str(PROJECT)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_binary_prints_summary():
    binary = PROJECT / "ledger"
    assert binary.is_file(), f"{binary} was not built"
    r = subprocess.run([str(binary)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    got = [line.rstrip() for line in r.stdout.strip().splitlines()]
    assert got == EXPECTED, f"got {got!r}, want {EXPECTED!r}"
