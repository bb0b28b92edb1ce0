"""Utility checks for deploy-notes-mem-rec-0."""
import json
import os
from pathlib import Path


NOTES = Path("/app/release/NOTES-2.0.0.md")
VERSION = "2.0.0"
TITLE = "orbit-cli 2.0.0"
ORDER = json.loads("[\"New features\",\"Fixes\",\"⚠ Breaking changes\"]")
EXPECTED = json.loads("{\"New features\":[\"allow hardware keys as a second factor\",\"export reports as CSV as well as PDF\",\"rank exact title matches first\",\"add cursor pagination to the orders listing\"],\"Fixes\":[\"return 404 instead of 500 for unknown invoice ids\",\"expire reset links after first use\",\"keep the original timestamps when copying attachments\",\"honour NO_COLOR in the progress output\"],\"⚠ Breaking changes\":[\"rename the storage.path setting to storage.root\",\"drop the legacy v1 export endpoint\"]}")


def sections():
    found, current = {}, None
    for line in NOTES.read_text(encoding="utf-8").splitlines():
        s = line.strip()
        if s.startswith("## "):
            current = s[3:].strip()
            found[current] = []
        elif current is not None and s[:2] in ("- ", "* "):
            found[current].append(s[2:].strip())
    return found


def test_notes_written():
    assert NOTES.is_file(), f"{NOTES} was not written"


def test_title():
    first = next(l for l in NOTES.read_text(encoding="utf-8").splitlines() if l.strip())
    assert first.strip().lstrip("#").strip() == TITLE and first.startswith("# "), f"first line {first!r}"


def test_section_order():
    assert [h for h in sections() if h in ORDER] == ORDER, f"sections {list(sections())}"


def test_section_entries():
    found = sections()
    for heading, want in EXPECTED.items():
        got = found.get(heading)
        assert got is not None, f"no section '## {heading}'"
        if not want:
            assert [b.strip("*_. ").casefold() for b in got] == ["none"], f"{heading}: {got}"
            continue
        assert len(got) == len(want), f"{heading}: {len(got)} bullets, want {len(want)}: {got}"
        at = []
        for desc in want:
            hits = [i for i, b in enumerate(got) if desc in b]
            assert len(hits) == 1, f"{heading}: '{desc}' should be in exactly one bullet, got {got}"
            at.append(hits[0])
        assert at == sorted(at), f"{heading}: not newest first: {got}"


def test_version_bumped():
    assert Path("/app/VERSION").read_text(encoding="utf-8").strip() == VERSION
