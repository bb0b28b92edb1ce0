#!/bin/bash
# Oracle: find the lost tip in the reflog and cherry-pick the lost range onto main.
set -euo pipefail
cd /app/repo
# A fixed committer date makes the cherry-picked commits' hashes (and so the gold) reproducible.
export GIT_COMMITTER_DATE='2026-01-01T00:00:00+00:00'

if git log --format=%s main | grep -qx "Document retry settings"; then
  exit 0
fi

lost_tip=$(git log --walk-reflogs --format='%H %s' main | awk '$0 ~ / Document retry settings$/ {print $1; exit}')
base=$(git merge-base main "$lost_tip")
git cherry-pick "$base..$lost_tip"
