#!/bin/bash
# Oracle: rewrite the script with quoting, fail-fast and a relative checksum, then run it.
set -euo pipefail

cat > /app/bin/backup.sh <<'SH'
#!/bin/bash
# Usage: backup.sh SRC_DIR DEST_DIR
# Archives SRC_DIR (without *.tmp files) to DEST_DIR/backup.tar.gz and writes its checksum
# to DEST_DIR/backup.sha256.
set -euo pipefail
SRC=$1
DEST=$2
if [ ! -d "$SRC" ]; then
  echo "backup.sh: source directory not found: $SRC" >&2
  exit 1
fi
mkdir -p "$DEST"
tar -czf "$DEST/backup.tar.gz" -C "$SRC" --exclude='*.tmp' .
(cd "$DEST" && sha256sum backup.tar.gz > backup.sha256)
echo "backup of $SRC written to $DEST"
SH
chmod 0755 /app/bin/backup.sh

/app/bin/backup.sh "/app/data/client files" "/app/backups/nightly run"
