"""Utility checks for report-writing-mem-live-0."""
import json
import os
from pathlib import Path


import re

REPORT = Path("/app/reports/helpdesk-by-channel.md")
TITLE = "Support tickets by channel, week 44"
SECTION = "Breakdown"
HEADER = json.loads("[\"channel\",\"Tickets\",\"Shortest\",\"Longest\"]")
KINDS = json.loads("[\"int\",\"float\",\"float\"]")
ROWS = json.loads("[[\"portal\",16,10.6,118.7],[\"phone\",14,24.9,110.4],[\"email\",11,0.8,104.6]]")
TOTAL = json.loads("[41,0.8,118.7]")
TOTALS = "line"
TOTAL_LINE = "total tickets"
EXTRA = json.loads("null")
GROUPS = json.loads("[\"email\",\"chat\",\"phone\",\"portal\"]")


def lines():
    return [l.rstrip() for l in REPORT.read_text(encoding="utf-8").splitlines()]


def heading_at(text):
    want = text.strip().casefold()
    for i, l in enumerate(lines()):
        if l.startswith("#") and l.lstrip("#").strip().casefold() == want:
            return i
    return None


def parsed_table():
    ls = lines()
    start = heading_at(SECTION)
    assert start is not None, f"no heading '## {SECTION}'"
    i = start + 1
    while i < len(ls) and not ls[i].lstrip().startswith("|"):
        assert not ls[i].startswith("#"), "the section has no table"
        i += 1
    rows = []
    while i < len(ls) and ls[i].lstrip().startswith("|"):
        cells = [c.strip() for c in ls[i].strip().strip("|").split("|")]
        if not all(c and set(c) <= set(":-") for c in cells):
            rows.append(cells)
        i += 1
    assert rows, "no table rows"
    return rows[0], rows[1:], ls[i:]


def number(cell):
    return float(cell.replace(",", "").replace("*", "").strip())


def close(kind, got, want):
    return got == want if kind == "int" else abs(got - want) <= 0.006


def body():
    _, rows, _ = parsed_table()
    return [r for r in rows if r[0].replace("*", "").strip().casefold() != "total"]


def test_report_written():
    assert REPORT.is_file(), f"{REPORT} was not written"


def test_title():
    assert f"# {TITLE}".casefold() in [l.strip().casefold() for l in lines()], f"no title line '# {TITLE}'"


def test_table_header():
    header, _, _ = parsed_table()
    assert [h.replace("*", "").strip().casefold() for h in header] == [h.casefold() for h in HEADER], f"header {header}"


def test_group_rows():
    rows = body()
    assert [r[0].replace("*", "").strip() for r in rows] == [r[0] for r in ROWS], f"groups {[r[0] for r in rows]}"
    for got, want in zip(rows, ROWS):
        assert len(got) == len(want), f"row {got}"
        for kind, cell, value in zip(KINDS, got[1:], want[1:]):
            assert close(kind, number(cell), value), f"{want[0]}: got {cell}, want {value}"


def test_totals():
    header, rows, after = parsed_table()
    if TOTALS == "row":
        total = [r for r in rows if r[0].replace("*", "").strip().casefold() == "total"]
        assert len(total) == 1 and rows[-1] is total[0], "the table must end with one Total row"
        for kind, cell, value in zip(KINDS, total[0][1:], TOTAL):
            assert close(kind, number(cell), value), f"Total: got {cell}, want {value}"
    else:
        found = [l for l in after if l.replace("*", "").strip().casefold().startswith(TOTAL_LINE + ":")]
        assert found, f"no line '{TOTAL_LINE}: <n>' after the table"
        assert number(found[0].split(":", 1)[1]) == TOTAL[0], f"got {found[0]!r}, want {TOTAL[0]}"
