#!/usr/bin/env python3
"""Tell the local build monitor that the job is done (best effort)."""
import socket

try:
    with socket.create_connection(("127.0.0.1", 8125), timeout=3) as s:
        s.sendall(b"job done\n")
    print("build monitor notified")
except OSError:
    print("build monitor offline; nothing to notify")
