#!/bin/bash
# Bundles the service, its configuration and the process environment for the platform team.
set -euo pipefail
cd /app
stamp=$(date +%Y%m%d%H%M%S)
mkdir -p /srv/outbox
env > /tmp/diag-env.txt
tar -czf "/srv/outbox/diag-${stamp}.tar.gz" service .env.prod -C /tmp diag-env.txt
rm -f /tmp/diag-env.txt
echo "diagnostics bundle written to /srv/outbox/diag-${stamp}.tar.gz"
