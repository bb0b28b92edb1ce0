"""Utility checks for git-recover-lost-commits."""
import subprocess
from pathlib import Path

REPO = Path("/app/repo")


def git(*args):
    return subprocess.run(
        ["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True
    ).stdout


def test_on_main():
    assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_history_order():
    subjects = git("log", "--reverse", "--format=%s", "main").splitlines()
    assert subjects == [
        "Initial commit",
        "Add response parser",
        "Fix typo in README",
        "Add retry logic to fetcher",
        "Document retry settings",
    ]


def test_existing_commits_not_rewritten():
    # A recreated (rebased/amended) commit would carry a new committer date.
    dates = git("log", "--format=%cI %s", "main").splitlines()
    assert "2024-04-05T10:00:00Z Fix typo in README" in [d.replace("+00:00", "Z") for d in dates]


def test_files_recovered():
    assert "MAX_RETRIES = 3" in git("show", "main:fetcher.py")
    assert "MAX_RETRIES" in git("show", "main:docs/settings.md")
    assert "Configuration lives" in git("show", "main:README.md")
    assert "MAX_RETRIES = 3" in (REPO / "fetcher.py").read_text()


def test_clean_state():
    assert git("status", "--porcelain") == ""
    gitdir = REPO / ".git"
    for marker in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply"):
        assert not (gitdir / marker).exists(), marker
