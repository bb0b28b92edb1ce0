"""Utility checks for backup-rotation-mem-rec-0."""
import json
import os
from pathlib import Path


BACKUPS = Path("/app/backups")
REPORT = Path("/app/reports/rotation.json")
KEPT = set(json.loads("[\"ledger-2026-09-13.bak\",\"ledger-2026-09-20.bak\",\"ledger-2026-09-27.bak\",\"ledger-2026-10-01.bak\",\"ledger-2026-10-02.bak\",\"ledger-2026-10-03.bak\",\"ledger-2026-10-04.bak\",\"ledger-2026-10-05.bak\",\"ledger-2026-10-06.bak\",\"ledger-2026-10-08.bak\",\"ledger-2026-10-09.bak\",\"ledger-2026-10-11.bak\",\"ledger-2026-10-12.bak\",\"mail-2026-09-06.bak\",\"mail-2026-09-12.bak\",\"mail-2026-09-20.bak\",\"mail-2026-09-26.bak\",\"mail-2026-10-01.bak\",\"mail-2026-10-02.bak\",\"mail-2026-10-03.bak\",\"mail-2026-10-04.bak\",\"mail-2026-10-05.bak\",\"mail-2026-10-06.bak\",\"mail-2026-10-08.bak\",\"mail-2026-10-09.bak\",\"mail-2026-10-11.bak\",\"mail-2026-10-12.bak\"]"))
REMOVED = set(json.loads("[\"ledger-2026-09-04.bak\",\"ledger-2026-09-05.bak\",\"ledger-2026-09-07.bak\",\"ledger-2026-09-08.bak\",\"ledger-2026-09-09.bak\",\"ledger-2026-09-10.bak\",\"ledger-2026-09-11.bak\",\"ledger-2026-09-12.bak\",\"ledger-2026-09-15.bak\",\"ledger-2026-09-16.bak\",\"ledger-2026-09-17.bak\",\"ledger-2026-09-19.bak\",\"ledger-2026-09-21.bak\",\"ledger-2026-09-23.bak\",\"ledger-2026-09-24.bak\",\"ledger-2026-09-25.bak\",\"ledger-2026-09-26.bak\",\"ledger-2026-09-28.bak\",\"ledger-2026-09-29.bak\",\"ledger-2026-09-30.bak\",\"mail-2026-09-04.bak\",\"mail-2026-09-05.bak\",\"mail-2026-09-07.bak\",\"mail-2026-09-08.bak\",\"mail-2026-09-09.bak\",\"mail-2026-09-10.bak\",\"mail-2026-09-15.bak\",\"mail-2026-09-16.bak\",\"mail-2026-09-17.bak\",\"mail-2026-09-18.bak\",\"mail-2026-09-19.bak\",\"mail-2026-09-21.bak\",\"mail-2026-09-22.bak\",\"mail-2026-09-23.bak\",\"mail-2026-09-24.bak\",\"mail-2026-09-25.bak\",\"mail-2026-09-29.bak\",\"mail-2026-09-30.bak\"]"))


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
