"""Utility checks for build-fix-mem-live-0."""
import json
import os
from pathlib import Path


import subprocess

PROJECT = Path("/app/inventory")
EXPECTED = json.loads("[\"items: 4\",\"units: 51\",\"total: 1581.89\",\"over 27.25: 4\"]")


def test_make_succeeds():
    r = subprocess.run(["make", "-C", str(PROJECT)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_binary_prints_summary():
    binary = PROJECT / "inventory"
    assert binary.is_file(), f"{binary} was not built"
    r = subprocess.run([str(binary)], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    got = [line.rstrip() for line in r.stdout.strip().splitlines()]
    assert got == EXPECTED, f"got {got!r}, want {EXPECTED!r}"
