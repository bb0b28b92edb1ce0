"""Utility checks for csv-sales-report: /app/report.json must match the sales data."""
import json
from pathlib import Path

import pytest

REPORT = Path("/app/report.json")


@pytest.fixture(scope="module")
def report():
    assert REPORT.is_file(), "report.json was not written"
    return json.loads(REPORT.read_text())


def test_exact_keys(report):
    assert set(report) == {
        "orders_counted",
        "total_revenue",
        "revenue_by_region",
        "units_by_product",
        "top_product",
        "invalid_rows",
    }


def test_counts(report):
    assert report["orders_counted"] == 45


def test_revenue(report):
    assert report["total_revenue"] == pytest.approx(6330.63, abs=0.005)
    expected = {"east": 1279.46, "north": 2392.43, "south": 1904.99, "west": 753.75}
    assert set(report["revenue_by_region"]) == set(expected)
    for region, value in expected.items():
        assert report["revenue_by_region"][region] == pytest.approx(value, abs=0.005)


def test_units(report):
    assert report["units_by_product"] == {
        "doohickey": 59,
        "gadget": 112,
        "gizmo": 124,
        "sprocket": 68,
        "widget": 178,
    }


def test_top_product(report):
    assert report["top_product"] == "gizmo"


def test_invalid_rows(report):
    assert report["invalid_rows"] == ["SO-1007", "SO-1023", "SO-1033", "SO-1041", "SO-1052"]


def test_input_untouched():
    lines = Path("/app/data/sales.csv").read_text().splitlines()
    assert len(lines) == 61
    assert lines[0] == "order_id,date,region,product,quantity,unit_price,status"
