"""Utility checks for c-fix-build: a clean rebuild works and the tool computes correctly."""
import math
import os
import subprocess
from pathlib import Path

SRC = Path("/app/src")
BIN = SRC / "stats"


def run_stats(text):
    out = subprocess.run([str(BIN)], input=text, capture_output=True, text=True, timeout=10, check=True)
    return out.stdout.strip()


def test_binary_left_in_place():
    assert BIN.is_file() and os.access(BIN, os.X_OK)


def test_clean_rebuild():
    subprocess.run(["make", "-C", str(SRC), "clean"], check=True, capture_output=True, timeout=60)
    assert not BIN.exists(), "make clean must remove the binary"
    subprocess.run(["make", "-C", str(SRC)], check=True, capture_output=True, timeout=60)
    assert BIN.is_file()


def test_basic_values():
    assert run_stats("2\n4\n4\n4\n5\n5\n7\n9\n") == "count=8 mean=5.000 stddev=2.000"


def test_skips_non_numeric_and_grows_buffer():
    values = [float(i) * 1.5 for i in range(1, 41)]
    text = "header\n\n" + "\n".join(str(v) for v in values) + "\nfooter\n"
    mean = sum(values) / len(values)
    stddev = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    assert run_stats(text) == f"count=40 mean={mean:.3f} stddev={stddev:.3f}"


def test_empty_input():
    assert run_stats("") == "count=0 mean=0.000 stddev=0.000"
