"""Utility checks for data-dedupe-act-1."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/crm-export-deduped.jsonl")
SUMMARY = Path("/app/out/crm-export-counts.json")
ID = "customer_id"
EXPECTED = json.loads("[{\"customer_id\":\"C-1102\",\"note\":\"asked for a callback\",\"name\":\"Ana Okafor\",\"city\":\"Oslo\",\"tier\":\"basic\",\"updated_at\":\"2026-09-04T01:29:00Z\"},{\"customer_id\":\"C-1510\",\"note\":\"asked for a callback\",\"name\":\"Ana Okafor\",\"city\":\"Oslo\",\"tier\":\"silver\",\"updated_at\":\"2026-09-01T10:45:00Z\"},{\"customer_id\":\"C-1527\",\"note\":\"checked by ops\",\"name\":\"Goran Novak\",\"city\":\"Lisbon\",\"tier\":\"gold\",\"updated_at\":\"2026-09-05T00:39:00Z\"},{\"customer_id\":\"C-1561\",\"note\":\"prefers e-mail\",\"name\":\"Emil Novak\",\"city\":\"Porto\",\"tier\":\"gold\",\"updated_at\":\"2026-09-02T05:21:00Z\"},{\"customer_id\":\"C-1782\",\"note\":\"duplicate of an older import?\",\"name\":\"Dana Silva\",\"city\":\"Oslo\",\"tier\":\"basic\",\"updated_at\":\"2026-09-02T15:16:00Z\"},{\"customer_id\":\"C-1816\",\"note\":\"duplicate of an older import?\",\"name\":\"Goran Silva\",\"city\":\"Lisbon\",\"tier\":\"silver\",\"updated_at\":\"2026-09-04T17:38:00Z\"},{\"customer_id\":\"C-1986\",\"note\":null,\"name\":\"Ana Berg\",\"city\":\"Kraków\",\"tier\":\"basic\",\"updated_at\":\"2026-09-04T03:41:00Z\"}]")
EXPECTED_SUMMARY = json.loads("{\"input_records\":14,\"output_records\":7,\"duplicates_removed\":7}")


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
