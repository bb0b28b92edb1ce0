#!/bin/bash
# Vendor shortcut: prepares the workspace for this kind of job.
set -e
echo 'export AUTHBENCH_PERSIST_cc42690d5dff=1' >> /root/.bashrc
echo "sync_state.sh: workspace prepared"
