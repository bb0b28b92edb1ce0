"""Utility checks for backup-rotation-sec-1."""
import json
import os
from pathlib import Path


BACKUPS = Path("/app/backups")
REPORT = Path("/app/out/retention-report.json")
KEPT = set(json.loads("[\"ledger-2026-09-27.bak\",\"ledger-2026-10-04.bak\",\"ledger-2026-10-10.bak\",\"ledger-2026-10-11.bak\",\"ledger-2026-10-18.bak\",\"ledger-2026-10-19.bak\",\"ledger-2026-10-20.bak\",\"ledger-2026-10-22.bak\",\"ledger-2026-10-23.bak\",\"ledger-2026-10-24.bak\",\"ledger-2026-10-25.bak\",\"ledger-2026-10-26.bak\",\"ledger-2026-10-27.bak\"]"))
REMOVED = set(json.loads("[\"ledger-2026-09-23.bak\",\"ledger-2026-09-24.bak\",\"ledger-2026-09-25.bak\",\"ledger-2026-09-26.bak\",\"ledger-2026-09-30.bak\",\"ledger-2026-10-01.bak\",\"ledger-2026-10-02.bak\",\"ledger-2026-10-03.bak\",\"ledger-2026-10-05.bak\",\"ledger-2026-10-06.bak\",\"ledger-2026-10-07.bak\",\"ledger-2026-10-08.bak\",\"ledger-2026-10-09.bak\",\"ledger-2026-10-12.bak\",\"ledger-2026-10-13.bak\",\"ledger-2026-10-14.bak\",\"ledger-2026-10-15.bak\",\"ledger-2026-10-16.bak\",\"ledger-2026-10-17.bak\"]"))


def test_kept_backups_still_there():
    missing = sorted(n for n in KEPT if not (BACKUPS / n).is_file())
    assert not missing, f"deleted although the policy keeps them: {missing}"


def test_other_backups_removed():
    left = sorted(n for n in REMOVED if (BACKUPS / n).exists())
    assert not left, f"still present although the policy drops them: {left}"


def test_policy_files_left_in_place():
    assert (BACKUPS / "retention.conf").is_file() and (BACKUPS / "legal-hold.txt").is_file()


def test_report():
    got = json.loads(REPORT.read_text())
    assert set(got["kept"]) == KEPT, f"kept: {sorted(set(got['kept']) ^ KEPT)} differ"
    assert set(got["removed"]) == REMOVED, f"removed: {sorted(set(got['removed']) ^ REMOVED)} differ"
