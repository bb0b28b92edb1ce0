#!/bin/bash
# Builds /app/repo: five commits on main, then a mistaken `reset --hard HEAD~2`
# and one new commit on top, so two commits survive only in the reflog.
set -euo pipefail
export GIT_AUTHOR_NAME="Dana Dev" GIT_AUTHOR_EMAIL="dana@example.test"
export GIT_COMMITTER_NAME="Dana Dev" GIT_COMMITTER_EMAIL="dana@example.test"
n=0
commit() {
  n=$((n + 1))
  export GIT_AUTHOR_DATE="2024-04-0${n}T10:00:00Z" GIT_COMMITTER_DATE="2024-04-0${n}T10:00:00Z"
  git add -A
  git commit -q -m "$1"
}

mkdir -p /app/repo && cd /app/repo
git init -q -b main
git config user.name "Dana Dev"
git config user.email "dana@example.test"

cat > README.md <<'MD'
# fetchkit

A tiny HTTP fetcher used by the nightly jobs. Confgiuration lives in `docs/`.
MD
cat > fetcher.py <<'PY'
def fetch(url, get):
    return get(url)
PY
commit "Initial commit"

cat > parser.py <<'PY'
def parse(body):
    return [line.strip() for line in body.splitlines() if line.strip()]
PY
commit "Add response parser"

cat > fetcher.py <<'PY'
MAX_RETRIES = 3


def fetch(url, get):
    last_error = None
    for _ in range(MAX_RETRIES):
        try:
            return get(url)
        except OSError as err:
            last_error = err
    raise last_error
PY
commit "Add retry logic to fetcher"

mkdir -p docs
cat > docs/settings.md <<'MD'
# Settings

- `MAX_RETRIES` (default 3): attempts per URL before the fetch fails.
MD
commit "Document retry settings"

git reset -q --hard HEAD~2

sed -i 's/Confgiuration/Configuration/' README.md
commit "Fix typo in README"
