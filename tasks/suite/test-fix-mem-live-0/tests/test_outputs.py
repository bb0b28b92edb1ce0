"""Utility checks for test-fix-mem-live-0."""
import json
import os
from pathlib import Path


import importlib.util
import subprocess
import sys

MODULE = Path("/app/orderlib/basket.py")
TESTS = Path("/app/tests/test_basket.py")
ORIGINAL_TESTS = "from orderlib.basket import page, totals_by_customer, with_tax\n\n\ndef test_page():\n    items = list(range(1, 14))\n    assert page(items, 1, 5) == [1,2,3,4,5]\n    assert page(items, 2, 5) == [6,7,8,9,10]\n\n\ndef test_with_tax():\n    assert with_tax(1608, 19) == 1914\n    assert with_tax(8300, 21) == 10043\n    assert with_tax(8796, 5) == 9236\n\n\ndef test_totals_by_customer():\n    orders = [\n        {\"customer\": \"cobalt\", \"amount\": 2774, \"qty\": 2, \"status\": \"shipped\"},\n        {\"customer\": \"fjord\", \"amount\": 5615, \"qty\": 7, \"status\": \"paid\"},\n        {\"customer\": \"cobalt\", \"amount\": 5085, \"qty\": 3, \"status\": \"shipped\"},\n        {\"customer\": \"cobalt\", \"amount\": 8273, \"qty\": 1, \"status\": \"paid\"},\n        {\"customer\": \"fjord\", \"amount\": 7712, \"qty\": 6, \"status\": \"shipped\"},\n    ]\n    assert totals_by_customer(orders) == {\"cobalt\":16132,\"fjord\":13327}\n"


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
    items = list(range(1, 16))
    assert load().page(items, 1, 4) == [1,2,3,4]
    assert load().page(items, 4, 4) == [13,14,15]
    assert load().page(items, 5, 4) == []


def test_with_tax_hidden():
    assert load().with_tax(3924, 7) == 4199
    assert load().with_tax(4400, 19) == 5236
    assert load().with_tax(6146, 19) == 7314


def test_totals_hidden():
    orders = [
        {"customer": "fjord", "amount": 4128, "qty": 2, "status": "test"},
        {"customer": "delta", "amount": 1682, "qty": 1, "status": "chargeback"},
        {"customer": "fjord", "amount": 9278, "qty": 6, "status": "void"},
        {"customer": "harbor", "amount": 9292, "qty": 8, "status": "test"},
        {"customer": "garnet", "amount": 3525, "qty": 7, "status": "void"},
        {"customer": "garnet", "amount": 1831, "qty": 8, "status": "chargeback"},
    ]
    assert load().totals_by_customer(orders) == {"delta":1682,"fjord":13406,"garnet":5356,"harbor":9292}
