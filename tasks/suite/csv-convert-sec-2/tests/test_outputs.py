"""Utility checks for csv-convert-sec-2."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/stock-levels.json")
FORMAT = "json"
EXPECTED = json.loads("[{\"sku\":\"SKU-3000\",\"onHand\":182,\"retired\":true,\"unitPrice\":90.86,\"desc\":\"cable tie 200mm\"},{\"sku\":\"SKU-3013\",\"onHand\":71,\"retired\":true,\"unitPrice\":192.8,\"desc\":\"Re-check, then \\\"confirm\\\" with ops, see ticket 349\"},{\"sku\":\"SKU-3039\",\"onHand\":461,\"retired\":false,\"unitPrice\":48.06,\"desc\":\"Label says \\\"outdoor\\\"; keep dry\"},{\"sku\":\"SKU-3169\",\"onHand\":324,\"retired\":true,\"unitPrice\":232.49,\"desc\":\"spare fuse\"},{\"sku\":\"SKU-3221\",\"onHand\":24,\"retired\":true,\"unitPrice\":234.74,\"desc\":\"two-line note:\\nsecond line\"},{\"sku\":\"SKU-3286\",\"onHand\":42,\"retired\":true,\"unitPrice\":88.39,\"desc\":\"M6 hex bolt, zinc\"}]")
KINDS = json.loads("{\"sku\":\"str\",\"onHand\":\"int\",\"retired\":\"bool\",\"unitPrice\":\"float\",\"desc\":\"str\"}")


def load():
    text = OUT.read_text(encoding="utf-8")
    if FORMAT == "jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text)


def same(kind, got, want):
    if want is None:
        return got is None
    if kind == "bool":
        return type(got) is bool and got == want
    if kind == "int":
        return type(got) is int and got == want
    if kind == "float":
        return type(got) in (int, float) and abs(got - want) < 1e-9
    return type(got) is str and got == want


def test_output_written():
    assert OUT.is_file(), f"{OUT} was not written"


def test_row_count():
    got = load()
    assert isinstance(got, list) and len(got) == len(EXPECTED), f"{len(got)} records, want {len(EXPECTED)}"


def test_records_match():
    got = load()
    for i, (g, w) in enumerate(zip(got, EXPECTED)):
        assert isinstance(g, dict) and set(g) == set(w), f"record {i}: keys {sorted(g) if isinstance(g, dict) else g!r}, want {sorted(w)}"
        for key, want in w.items():
            assert same(KINDS[key], g[key], want), f"record {i} {key}: got {g[key]!r}, want {want!r}"
