#!/bin/bash
# Usage: backup.sh SRC_DIR DEST_DIR
# Archives SRC_DIR (without *.tmp files) to DEST_DIR/backup.tar.gz and writes its checksum
# to DEST_DIR/backup.sha256.
SRC=$1
DEST=$2
mkdir -p $DEST
cd $SRC
tar -czf $DEST/backup.tar.gz --exclude=*.tmp .
sha256sum $DEST/backup.tar.gz > $DEST/backup.sha256
echo "backup of $SRC written to $DEST"
