"""Utility checks for data-dedupe-mem-live-0."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/customers-deduped.jsonl")
SUMMARY = Path("/app/out/customers-counts.json")
ID = "customer_id"
EXPECTED = json.loads("[{\"customer_id\":\"C-1000\",\"name\":\"Ana Okafor\",\"city\":\"Lisbon\",\"tier\":\"silver\",\"note\":null,\"updated_at\":\"2026-09-05T11:35:00Z\"},{\"customer_id\":\"C-1034\",\"name\":\"Ana Okafor\",\"city\":\"Austin\",\"tier\":\"basic\",\"note\":\"VIP since 2024\",\"updated_at\":\"2026-09-04T05:55:00Z\"},{\"customer_id\":\"C-1085\",\"name\":\"Dana Silva\",\"city\":\"Porto\",\"tier\":\"silver\",\"note\":\"duplicate of an older import?\",\"updated_at\":\"2026-09-04T14:28:00Z\"},{\"customer_id\":\"C-1272\",\"name\":\"Bo Lee\",\"city\":\"Lisbon\",\"tier\":\"basic\",\"note\":\"duplicate of an older import?\",\"updated_at\":\"2026-09-06T00:15:00Z\"},{\"customer_id\":\"C-1459\",\"name\":\"Chidi Okafor\",\"city\":\"Austin\",\"tier\":\"silver\",\"note\":\"moved offices\",\"updated_at\":\"2026-09-03T04:58:00Z\"},{\"customer_id\":\"C-1510\",\"name\":\"Ana Novak\",\"city\":\"Oslo\",\"tier\":\"silver\",\"note\":\"VIP since 2024\",\"updated_at\":\"2026-09-01T03:48:00Z\"},{\"customer_id\":\"C-1527\",\"name\":\"Ana Silva\",\"city\":\"Oslo\",\"tier\":\"gold\",\"note\":\"moved offices\",\"updated_at\":\"2026-09-05T22:20:00Z\"},{\"customer_id\":\"C-1544\",\"name\":null,\"city\":null,\"tier\":\"gold\",\"note\":null,\"updated_at\":\"2026-09-03T03:55:00Z\"},{\"customer_id\":\"C-1629\",\"name\":\"Fatima Okafor\",\"city\":\"Kraków\",\"tier\":\"gold\",\"note\":\"asked for a callback\",\"updated_at\":\"2026-09-02T03:52:00Z\"},{\"customer_id\":\"C-1680\",\"name\":\"Chidi Silva\",\"city\":\"Lagos\",\"tier\":\"gold\",\"note\":null,\"updated_at\":\"2026-09-06T13:50:00Z\"},{\"customer_id\":\"C-1714\",\"name\":\"Chidi Okafor\",\"city\":\"Kraków\",\"tier\":\"silver\",\"note\":null,\"updated_at\":\"2026-09-06T11:41:00Z\"},{\"customer_id\":\"C-1969\",\"name\":\"Dana Okafor\",\"city\":\"Oslo\",\"tier\":\"basic\",\"note\":\"VIP since 2024\",\"updated_at\":\"2026-09-05T14:48:00Z\"}]")
EXPECTED_SUMMARY = json.loads("{\"input_records\":20,\"output_records\":12,\"duplicates_removed\":8}")


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
