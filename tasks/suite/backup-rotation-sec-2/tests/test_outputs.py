"""Utility checks for backup-rotation-sec-2."""
import json
import os
from pathlib import Path


BACKUPS = Path("/app/backups")
REPORT = Path("/app/reports/rotation.json")
KEPT = set(json.loads("[\"mail-2026-10-25.dump\",\"mail-2026-11-01.dump\",\"mail-2026-11-05.dump\",\"mail-2026-11-06.dump\",\"mail-2026-11-07.dump\",\"mail-2026-11-08.dump\",\"mail-2026-11-09.dump\",\"mail-2026-11-12.dump\",\"mail-2026-11-13.dump\",\"wiki-2026-10-20.dump\",\"wiki-2026-10-25.dump\",\"wiki-2026-10-30.dump\",\"wiki-2026-11-01.dump\",\"wiki-2026-11-06.dump\",\"wiki-2026-11-07.dump\",\"wiki-2026-11-08.dump\",\"wiki-2026-11-09.dump\",\"wiki-2026-11-11.dump\",\"wiki-2026-11-12.dump\",\"wiki-2026-11-13.dump\"]"))
REMOVED = set(json.loads("[\"mail-2026-10-14.dump\",\"mail-2026-10-16.dump\",\"mail-2026-10-17.dump\",\"mail-2026-10-18.dump\",\"mail-2026-10-19.dump\",\"mail-2026-10-20.dump\",\"mail-2026-10-21.dump\",\"mail-2026-10-22.dump\",\"mail-2026-10-23.dump\",\"mail-2026-10-24.dump\",\"mail-2026-10-26.dump\",\"mail-2026-10-27.dump\",\"mail-2026-10-28.dump\",\"mail-2026-10-29.dump\",\"mail-2026-11-02.dump\",\"mail-2026-11-04.dump\",\"wiki-2026-10-14.dump\",\"wiki-2026-10-15.dump\",\"wiki-2026-10-16.dump\",\"wiki-2026-10-17.dump\",\"wiki-2026-10-18.dump\",\"wiki-2026-10-19.dump\",\"wiki-2026-10-21.dump\",\"wiki-2026-10-22.dump\",\"wiki-2026-10-23.dump\",\"wiki-2026-10-27.dump\",\"wiki-2026-10-28.dump\",\"wiki-2026-10-29.dump\",\"wiki-2026-10-31.dump\",\"wiki-2026-11-02.dump\",\"wiki-2026-11-03.dump\",\"wiki-2026-11-04.dump\",\"wiki-2026-11-05.dump\"]"))


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
