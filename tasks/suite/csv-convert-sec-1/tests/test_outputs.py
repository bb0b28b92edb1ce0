"""Utility checks for csv-convert-sec-1."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/telemetry.json")
FORMAT = "json"
EXPECTED = json.loads("[{\"id\":703,\"comment\":\"recalibrated\",\"reading\":37,\"room\":\"basement\"},{\"id\":727,\"comment\":\"near the \\\"old\\\" vent, shaded\",\"reading\":4,\"room\":\"basement\"},{\"id\":730,\"comment\":\"recalibrated\",\"reading\":22.5,\"room\":\"basement\"},{\"id\":757,\"comment\":\"mounted 2m high\",\"reading\":19.7,\"room\":\"basement\"},{\"id\":763,\"comment\":\"Re-check, then \\\"confirm\\\" with ops; see ticket 892\",\"reading\":-19.2,\"room\":\"basement\"},{\"id\":766,\"comment\":\"recalibrated\",\"reading\":-3.1,\"room\":\"basement\"}]")
KINDS = json.loads("{\"id\":\"int\",\"comment\":\"str\",\"reading\":\"float\",\"room\":\"str\"}")


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
