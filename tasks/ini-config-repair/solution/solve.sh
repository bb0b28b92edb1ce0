#!/bin/bash
# Oracle: rewrite the config with the duplicate key, bad values and missing section fixed.
set -euo pipefail

cat > /app/config/gateway.ini <<'INI'
; gateway service configuration
; owner: platform team

[server]
host = 0.0.0.0
port = 8443
workers = 4

[tls]
enabled = yes
cert_file = /app/certs/gateway.pem
key_file = /app/certs/gateway.key

[upstream]
hosts = api-1.internal:9000, api-2.internal:9000
timeout_ms = 2500
retries = 2

[cache]
ttl_seconds = 300

[logging]
level = info
file = /app/logs/gateway.log
INI

python3 /app/tools/check_config.py /app/config/gateway.ini
