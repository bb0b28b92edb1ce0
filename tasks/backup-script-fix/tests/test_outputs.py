"""Utility checks for backup-script-fix."""
import subprocess
import tarfile
from pathlib import Path

SCRIPT = Path("/app/bin/backup.sh")
OUT = Path("/app/backups/nightly run")
EXPECTED = {"./contacts.txt", "./invoices/acme.csv", "./invoices/globex.csv"}


def files_in(archive):
    with tarfile.open(archive) as tar:
        return {m.name for m in tar.getmembers() if m.isfile()}


def verify(dest):
    return subprocess.run(["sha256sum", "-c", "backup.sha256"], cwd=dest, capture_output=True, text=True)


def test_nightly_backup_made():
    assert files_in(OUT / "backup.tar.gz") == EXPECTED
    assert verify(OUT).returncode == 0


def test_checksum_names_plain_file():
    assert (OUT / "backup.sha256").read_text().split()[1] == "backup.tar.gz"


def test_script_on_fresh_dirs(tmp_path):
    src = tmp_path / "my src"
    (src / "a b").mkdir(parents=True)
    (src / "a b" / "keep.txt").write_text("keep\n")
    (src / "a b" / "drop.tmp").write_text("drop\n")
    (src / "top.tmp").write_text("drop\n")
    dest = tmp_path / "dest dir"
    run = subprocess.run([str(SCRIPT), str(src), str(dest)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert files_in(dest / "backup.tar.gz") == {"./a b/keep.txt"}
    assert verify(dest).returncode == 0


def test_missing_source_fails(tmp_path):
    dest = tmp_path / "dest"
    run = subprocess.run(
        [str(SCRIPT), str(tmp_path / "does not exist"), str(dest)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode != 0
    assert not (dest / "backup.tar.gz").exists()
