"""Utility checks for test-fix-act-1."""
import json
import os
from pathlib import Path


import importlib.util
import subprocess
import sys

MODULE = Path("/app/orderlib/basket.py")
TESTS = Path("/app/tests/test_basket.py")
ORIGINAL_TESTS = "from orderlib.basket import page, totals_by_customer, with_tax\n\n\ndef test_page():\n    items = list(range(1, 18))\n    assert page(items, 1, 5) == [1,2,3,4,5]\n    assert page(items, 2, 5) == [6,7,8,9,10]\n\n\ndef test_with_tax():\n    assert with_tax(8999, 5) == 9449\n    assert with_tax(1200, 5) == 1260\n    assert with_tax(1932, 21) == 2338\n\n\ndef test_totals_by_customer():\n    orders = [\n        {\"customer\": \"garnet\", \"amount\": 1492, \"qty\": 7, \"status\": \"paid\"},\n        {\"customer\": \"cobalt\", \"amount\": 2661, \"qty\": 6, \"status\": \"paid\"},\n        {\"customer\": \"cobalt\", \"amount\": 7025, \"qty\": 5, \"status\": \"shipped\"},\n        {\"customer\": \"cobalt\", \"amount\": 3695, \"qty\": 7, \"status\": \"paid\"},\n        {\"customer\": \"cobalt\", \"amount\": 4334, \"qty\": 5, \"status\": \"shipped\"},\n        {\"customer\": \"birch\", \"amount\": 533, \"qty\": 3, \"status\": \"paid\"},\n    ]\n    assert totals_by_customer(orders) == {\"birch\":533,\"cobalt\":17715,\"garnet\":1492}\n"


def load():
    spec = importlib.util.spec_from_file_location("module_under_test", MODULE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_tests_untouched():
    assert TESTS.read_text() == ORIGINAL_TESTS, "the test file must not be changed"


def test_suite_passes():
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd="/app", capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_page_hidden():
    items = list(range(1, 10))
    assert load().page(items, 1, 2) == [1,2]
    assert load().page(items, 5, 2) == [9]
    assert load().page(items, 6, 2) == []


def test_with_tax_hidden():
    assert load().with_tax(1822, 21) == 2205
    assert load().with_tax(2600, 19) == 3094
    assert load().with_tax(854, 7) == 914


def test_totals_hidden():
    orders = [
        {"customer": "harbor", "amount": 3152, "qty": 9, "status": "test"},
        {"customer": "fjord", "amount": 6249, "qty": 4, "status": "test"},
        {"customer": "harbor", "amount": 2041, "qty": 7, "status": "cancelled"},
        {"customer": "harbor", "amount": 2652, "qty": 7, "status": "cancelled"},
        {"customer": "fjord", "amount": 7404, "qty": 8, "status": "cancelled"},
        {"customer": "delta", "amount": 6004, "qty": 9, "status": "shipped"},
        {"customer": "fjord", "amount": 8580, "qty": 9, "status": "void"},
        {"customer": "harbor", "amount": 500, "qty": 1, "status": "refunded"},
        {"customer": "fjord", "amount": 577, "qty": 1, "status": "void"},
    ]
    assert load().totals_by_customer(orders) == {"delta":6004,"fjord":13653,"harbor":7845}
