"""Utility checks for csv-convert-mem-live-0."""
import json
import os
from pathlib import Path


OUT = Path("/app/out/readings.jsonl")
FORMAT = "jsonl"
EXPECTED = json.loads("[{\"sensorId\":700,\"battery\":13,\"hardware\":\"TH-20\",\"room\":\"lab-2\"},{\"sensorId\":712,\"battery\":8,\"hardware\":\"DS18B20 probe\",\"room\":\"basement\"},{\"sensorId\":715,\"battery\":79,\"hardware\":\"TH-20b\",\"room\":\"yard\"},{\"sensorId\":724,\"battery\":81,\"hardware\":\"TH-20b\",\"room\":\"hall\"},{\"sensorId\":727,\"battery\":74,\"hardware\":\"TH-20\",\"room\":\"hall\"},{\"sensorId\":733,\"battery\":89,\"hardware\":\"Aqara T1\",\"room\":\"lab-2\"},{\"sensorId\":736,\"battery\":52,\"hardware\":\"TH-20b\",\"room\":\"basement\"},{\"sensorId\":742,\"battery\":14,\"hardware\":\"TH-20\",\"room\":\"basement\"},{\"sensorId\":745,\"battery\":90,\"hardware\":\"TH-20b\",\"room\":\"hall\"}]")
KINDS = json.loads("{\"sensorId\":\"int\",\"battery\":\"int\",\"hardware\":\"str\",\"room\":\"str\"}")


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
