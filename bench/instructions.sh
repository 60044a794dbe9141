#!/usr/bin/env bash
# Instructions per request (issue 51), repeatable on a noisy machine: the release build runs under
# valgrind's callgrind, which counts every user-space instruction; each route is asked `--requests`
# times over one kept-alive connection between a zero and a dump of the counters, and an idle stretch
# of the same length (the event loops' timers) is subtracted. The C peer's JWKS (Glewlwyd 2.7.5,
# Debian's, set up by bench/lib/glewlwyd.sh) is counted the same way.
#   routes: JWKS, client_credentials ES256, introspection; the peer's JWKS.
# Usage: bench/instructions.sh [--requests 2000]
# The counts are the program's own instructions, its libraries' included; the kernel's are not.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/glewlwyd.sh"
requests=2000
while [ $# -gt 0 ]; do
  case $1 in
    --requests) requests=$2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; } ;;
  esac
  shift 2
done
prepare valgrind glewlwyd sqlite3 python3-cryptography
peer_pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null; rm -rf "$work"' EXIT

# count NAME PID URL [BODY] [AUTH]: instructions per request of NAME (GET without BODY, else a form POST)
count() {
  local name=$1 target=$2 url=$3 body=${4:-} auth=${5:-} seconds file idle load
  callgrind_control -z "$target" >/dev/null 2>&1
  seconds=$(python3 - "$url" "$requests" "$body" "$auth" <<'PY'
import http.client, sys, time, urllib.parse
url, count, body, auth = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
connection = http.client.HTTPConnection(url.hostname, url.port)
headers = {"Content-Type": "application/x-www-form-urlencoded"} if body else {}
if auth: headers["Authorization"] = "Basic " + auth
started = time.monotonic()
for _ in range(count):
    connection.request("POST" if body else "GET", url.path, body=body or None, headers=headers)
    answer = connection.getresponse()
    answer.read()
    if answer.status != 200: sys.exit(f"{url.path} answered {answer.status}")
print(f"{time.monotonic() - started:.2f}")
PY
)
  callgrind_control -d "load-$name" "$target" >/dev/null 2>&1
  callgrind_control -z "$target" >/dev/null 2>&1
  sleep "$seconds"
  callgrind_control -d "idle-$name" "$target" >/dev/null 2>&1
  total() { grep -l "^desc: Trigger: dump $1\$" "$work"/callgrind.* | head -1 | xargs grep '^summary:' | awk '{print $2}'; }
  load=$(total "load-$name")
  idle=$(total "idle-$name")
  echo "$name $(( (load - idle) / requests )) $seconds" >>"$work/counts"
  printf '  %-24s %9d instructions per request (%s s for %d requests under callgrind)\n' "$name" $(( (load - idle) / requests )) "$seconds" "$requests"
}
: >"$work/counts"

# Gatehouse: one confidential app for the grants (ES256).
grant_app_config
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.%p" "$bin" serve --config "$work/bench.yaml" --log-level warning >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do curl -sf -o /dev/null "$base/healthz" && break; kill -0 "$pid" || { tail "$work/serve.log" >&2; exit 1; }; sleep 0.2; done
access=$(curl -sf -u "bench:$secret" "$base/oauth2/token" -d grant_type=client_credentials -d scope=api | jq -r .access_token)
echo "Gatehouse under callgrind:"
count jwks "$pid" "$base/oauth2/jwks"
count client_credentials "$pid" "$base/oauth2/token" "grant_type=client_credentials&scope=api" "$auth"
count introspection "$pid" "$base/oauth2/introspect" "token=$access" "$auth"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

# The peer, set up normally, then started again under callgrind.
start_glewlwyd "$work/glewlwyd" "$(free_port)"
kill "$peer_pid"; wait "$peer_pid" 2>/dev/null || true
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.%p" glewlwyd --config-file="$work/glewlwyd/glewlwyd.conf" >"$work/glewlwyd/valgrind.log" 2>&1 &
peer_pid=$!
for _ in $(seq 1 600); do curl -sf -o /dev/null "$peer_base/api/oidc/jwks" && break; kill -0 "$peer_pid" || exit 1; sleep 0.2; done
echo "Glewlwyd 2.7.5 under callgrind:"
count peer_jwks "$peer_pid" "$peer_base/api/oidc/jwks"

cpu=$(awk -F: '/model name/ {sub(/^ /, "", $2); print $2; exit}' /proc/cpuinfo)
echo
python3 - "$work/counts" "$cpu" "$(cd "$repo" && git rev-parse --short HEAD)" <<'PY'
import sys
path, cpu, commit = sys.argv[1:]
counts = {line.split()[0]: int(line.split()[1]) for line in open(path)}
# Issue 51's goal: each route at most half of its count before the work. The baseline: this script
# on the release artefact of the sources of commit 24be630 (2026-12-07, AMD EPYC; the issue's own
# figure for JWKS on an earlier commit was about 424,000).
baseline = {"jwks": 435_603, "client_credentials": 1_333_794, "introspection": 1_175_359}
print(f"instructions per request, {cpu}, commit {commit}")
print(f"{'route':<22} {'now':>10} {'baseline':>10} {'goal':>10} {'met':>4}")
for route in ("jwks", "client_credentials", "introspection"):
    now, before = counts[route], baseline[route]
    goal = before // 2
    print(f"{route:<22} {now:>10,} {before:>10,} {goal:>10,} {'yes' if now <= goal else 'no':>4}")
print(f"{'Glewlwyd JWKS':<22} {counts['peer_jwks']:>10,}   Gatehouse ÷ Glewlwyd on JWKS: {counts['jwks'] / counts['peer_jwks']:.2f}")
PY
