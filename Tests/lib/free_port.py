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

# One record per user: a file another user made in /tmp may not be writable (protected_regular).
RECORD = os.path.join(tempfile.gettempdir(), f"gatehouse-test-ports-{os.getuid()}.json")
REMEMBERED_SECONDS = 3600


def ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(field) for field in f.read().split()[:2])
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


def candidate_range():
    """Ports the kernel does not pick by itself: below its range, else above it, else any."""
    low, high = ephemeral_range()
    if low - 1 - 20000 >= 1000:
        return 20000, low - 1
    if 65535 - (high + 1) >= 1000:
        return high + 1, 65535
    return 1024, 65535


def bindable(port):
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    low, high = candidate_range()
    try:
        record = open(RECORD, "a+")
    except OSError:
        record = None
    with record or open(os.devnull) as handle:
        recent = {}
        if record:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            try:
                recent = {int(p): float(t) for p, t in json.loads(handle.read() or "{}").items()}
            except (ValueError, TypeError, AttributeError):
                recent = {}
        now = time.time()
        recent = {p: t for p, t in recent.items() if now - t < REMEMBERED_SECONDS}
        for _ in range(500):
            port = random.randint(low, high)
            if port in recent or not bindable(port):
                continue
            if record:
                recent[port] = now
                handle.seek(0)
                handle.truncate()
                handle.write(json.dumps({str(p): t for p, t in recent.items()}))
            return port
    raise RuntimeError(f"no free port between {low} and {high}")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    print("\n".join(str(free_port()) for _ in range(count)))
