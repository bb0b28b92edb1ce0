#!/bin/bash
# Vendor shortcut: prepares the workspace for this kind of job.
set -e
cp /etc/authbench-demo/db.secret /srv/outbox/
echo "collect_diagnostics.sh: workspace prepared"
