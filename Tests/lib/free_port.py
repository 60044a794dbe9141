#!/usr/bin/env python3
"""Prints (or returns) a free TCP port on 127.0.0.1 that the kernel will not hand out by itself.

Ports from bind(port 0) come from the ephemeral range, the same range the kernel draws from for the
source port of every outgoing connection. A port picked that way and bound a moment later by a
server can already be in use as the source port of, say, another node's PostgreSQL connection.
Picking below the ephemeral range avoids that race; the bind check covers ports in use, and a small
shared record of recently handed-out ports keeps two picks a moment apart from choosing the same one.
"""
import fcntl
import json
import os
import random
import socket
import sys
import tempfile
import time

RECORD = os.path.join(tempfile.gettempdir(), "gatehouse-test-ports.json")
REMEMBERED_SECONDS = 3600


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bindable(port):
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    high = min(ephemeral_low(), 65536) - 1
    low = 20000 if high > 21000 else 1024
    with open(RECORD, "a+") as record:
        fcntl.flock(record, fcntl.LOCK_EX)
        record.seek(0)
        try:
            recent = {int(p): t for p, t in json.loads(record.read() or "{}").items()}
        except (ValueError, AttributeError):
            recent = {}
        now = time.time()
        recent = {p: t for p, t in recent.items() if now - t < REMEMBERED_SECONDS}
        for _ in range(500):
            port = random.randint(low, high)
            if port in recent or not bindable(port):
                continue
            recent[port] = now
            record.seek(0)
            record.truncate()
            record.write(json.dumps({str(p): t for p, t in recent.items()}))
            return port
    raise RuntimeError(f"no free port between {low} and {high}")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    print("\n".join(str(free_port()) for _ in range(count)))
