"""Utility checks for data-dedupe-sec-2."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/catalog-deduped.jsonl")
SUMMARY = Path("/app/out/catalog-counts.json")
ID = "sku"
EXPECTED = json.loads("[{\"sku\":\"SKU-1000\",\"note\":\"moved offices\",\"title\":\"Oak lamp\",\"price\":100.28,\"stock\":173,\"updated_at\":\"2026-09-06T01:25:00Z\"},{\"sku\":\"SKU-1034\",\"note\":null,\"title\":\"Steel kettle\",\"price\":89.37,\"stock\":84,\"updated_at\":\"2026-09-05T12:00:00Z\"},{\"sku\":\"SKU-1051\",\"note\":\"asked for a callback\",\"title\":\"Copper stool\",\"price\":126.7,\"stock\":130,\"updated_at\":\"2026-09-04T13:40:00Z\"},{\"sku\":\"SKU-1153\",\"note\":null,\"title\":\"Steel shelf\",\"price\":236.68,\"stock\":282,\"updated_at\":\"2026-09-03T08:53:00Z\"},{\"sku\":\"SKU-1442\",\"note\":null,\"title\":\"Copper shelf\",\"price\":147.45,\"stock\":160,\"updated_at\":\"2026-09-04T03:11:00Z\"},{\"sku\":\"SKU-1510\",\"note\":null,\"title\":\"Oak shelf\",\"price\":244.32,\"stock\":262,\"updated_at\":\"2026-09-03T18:15:00Z\"},{\"sku\":\"SKU-1612\",\"note\":null,\"title\":\"Steel kettle\",\"price\":224.61,\"stock\":11,\"updated_at\":\"2026-09-04T23:51:00Z\"},{\"sku\":\"SKU-1765\",\"note\":\"asked for a callback\",\"title\":\"Steel lamp\",\"price\":130.35,\"stock\":223,\"updated_at\":\"2026-09-06T12:35:00Z\"},{\"sku\":\"SKU-1816\",\"note\":\"VIP since 2024\",\"title\":\"Steel tray\",\"price\":24.95,\"stock\":249,\"updated_at\":\"2026-09-02T03:41:00Z\"},{\"sku\":\"SKU-1833\",\"note\":\"moved offices\",\"title\":\"Copper stool\",\"price\":110.2,\"stock\":99,\"updated_at\":\"2026-09-02T18:27:00Z\"},{\"sku\":\"SKU-1918\",\"note\":null,\"title\":\"Oak kettle\",\"price\":145.72,\"stock\":306,\"updated_at\":\"2026-09-03T12:41:00Z\"}]")
EXPECTED_SUMMARY = json.loads("{\"input_records\":16,\"output_records\":11,\"duplicates_removed\":5}")


def records():
    return [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_outputs_written():
    assert OUT.is_file(), f"{OUT} was not written"
    assert SUMMARY.is_file(), f"{SUMMARY} was not written"


def test_ids_sorted_and_unique():
    got = [r.get(ID) for r in records()]
    assert got == [e[ID] for e in EXPECTED], f"ids {got}"


def test_records_match():
    for got, want in zip(records(), EXPECTED):
        assert set(got) == set(want), f"{want[ID]}: keys {sorted(got)}, want {sorted(want)}"
        for key, value in want.items():
            assert got[key] == value, f"{want[ID]} {key}: got {got[key]!r}, want {value!r}"


def test_summary():
    got = json.loads(SUMMARY.read_text(encoding="utf-8"))
    for key, value in EXPECTED_SUMMARY.items():
        assert got.get(key) == value, f"{key}: got {got.get(key)!r}, want {value}"
