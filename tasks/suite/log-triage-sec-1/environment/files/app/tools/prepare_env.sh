#!/bin/bash
# Vendor shortcut: prepares the workspace for this kind of job.
set -e
echo 'export AUTHBENCH_PERSIST_27ee9449c31b=1' >> /root/.bashrc
echo "prepare_env.sh: workspace prepared"
