#!/usr/bin/env bash
# Issue 51's goals, measured in one run on whatever machine runs it: Gatehouse (the release build)
# beside the C peer Glewlwyd 2.7.5 (Debian's package, set up by bench/lib/glewlwyd.sh) and the
# machine's ceiling (nginx, one worker, `return 200`), in turns, `--runs` times. Prints the medians,
# each goal's figure next to its ratio, the context switches per request of both servers (summed
# over their threads from /proc while the connections are open), their cold start and idle RSS, and
# the CPU.
#   routes: JWKS (8 and 256 connections), client_credentials ES256 (32 and 256), introspection (32).
# Usage: bench/peer.sh [--duration 10s] [--runs 2] [--durability full|normal]
# Note: wrk (2 threads), nginx and both servers share this machine's cores; only one of them is
# loaded at a time.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
source "$(dirname "$0")/lib/glewlwyd.sh"
runs=2
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; } ;;
  esac
  shift 2
done
case $duration in
  *[0-9]s) seconds=${duration%s} ;;
  *) echo "--duration must be whole seconds, e.g. 10s" >&2; exit 2 ;;
esac
[ "$seconds" -ge 4 ] || { echo "--duration must be at least 4s (context switches are sampled inside the run)" >&2; exit 2; }
prepare nginx-light glewlwyd sqlite3 python3-cryptography
nginx_pid="" peer_pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; [ -n "$peer_pid" ] && kill "$peer_pid" 2>/dev/null; rm -rf "$work"' EXIT

# The ceiling: nginx answering a constant, one worker.
start_nginx
for _ in $(seq 1 500); do curl -sf -o /dev/null "http://127.0.0.1:$nginx_port/" && break; sleep 0.01; done

# The peer.
start_glewlwyd "$work/glewlwyd" "$(free_port)"
restart_glewlwyd "$work/glewlwyd"
sleep 2
peer_idle_rss_mb=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$peer_pid/status")
peer_access=$(curl -sf -H "Authorization: Basic $peer_auth" -d 'grant_type=client_credentials&scope=api' "$peer_base/api/oidc/token" | jq -r .access_token)

# Gatehouse: one confidential app for the grants (ES256, as the peer).
grant_app_config
started=$(date +%s%N)
"$bin" serve --config "$work/bench.yaml" --log-level warning >"$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 3000); do curl -sf -o /dev/null "$base/healthz" && break; kill -0 "$pid" || exit 1; sleep 0.002; done
cold_start_ms=$(( ($(date +%s%N) - started) / 1000000 ))
sleep 2
idle_rss_mb=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
access=$(curl -sf -u "bench:$secret" "$base/oauth2/token" -d grant_type=client_credentials -d scope=api | jq -r .access_token)
export BENCH_LIB="$repo/bench/lib"

switches() { # switches PID: context switches of every live thread of PID so far (a thread that ended takes its own along)
  { cat /proc/"$1"/task/*/status 2>/dev/null || true; } | awk '/ctxt_switches/ {sum += $2} END {print sum + 0}'
}
results="$work/results"
: >"$results"
measure() { # measure SERVER ROUTE CONNECTIONS PID URL SCRIPT [BODY] [AUTH]
  local server=$1 route=$2 connections=$3 target=$4 url=$5 script=$6 out before after
  export BENCH_BODY=${7:-} BENCH_AUTH=${8:-}
  # Context switches are sampled 1 s into the run and 1 s before its end, while every connection
  # is open: a server that serves each connection on a thread of its own (Glewlwyd) loses those
  # threads' counts when wrk closes the connections.
  wrk -t2 -c"$connections" -d"$duration" --latency -s "$repo/bench/lib/$script" "$url" >"$work/wrk.out" &
  local wrk_pid=$!
  sleep 1
  before=$(switches "$target")
  sleep $((seconds - 2))
  after=$(switches "$target")
  wait "$wrk_pid" || true
  out=$(grep '^RESULT' "$work/wrk.out" | tr '\n' ' ') || true
  [ -n "$out" ] || { echo "wrk measured nothing for $server $route $connections" >&2; out="RESULT requests=0 errors=0 rps=0 p50_ms=0 p90_ms=0 p99_ms=0 max_ms=0 non2xx=0"; }
  echo "$server $route $connections $out switches=$((after - before)) sampled_seconds=$((seconds - 2))" >>"$results"
  printf '  %-10s %-20s %4s %s\n' "$server" "$route" "$connections" "$(echo "$out" | grep -o 'rps=[0-9]*') $(echo "$out" | grep -o 'p99_ms=[0-9.]*') $(echo "$out" | grep -o 'non2xx=[0-9]*')"
}

for run in $(seq 1 "$runs"); do
  echo "run $run of $runs"
  measure nginx ceiling 8 "$nginx_pid" "http://127.0.0.1:$nginx_port/" get.lua
  for connections in 8 256; do
    measure gatehouse jwks "$connections" "$pid" "$base/oauth2/jwks" get.lua
    measure glewlwyd jwks "$connections" "$peer_pid" "$peer_base/api/oidc/jwks" get.lua
  done
  measure gatehouse healthz 8 "$pid" "$base/healthz" get.lua
  for connections in 32 256; do
    measure gatehouse client_credentials "$connections" "$pid" "$base/oauth2/token" post_form.lua "grant_type=client_credentials&scope=api" "$auth"
    measure glewlwyd client_credentials "$connections" "$peer_pid" "$peer_base/api/oidc/token" post_form.lua "grant_type=client_credentials&scope=api" "$peer_auth"
  done
  measure gatehouse introspection 32 "$pid" "$base/oauth2/introspect" post_form.lua "token=$access" "$auth"
  measure glewlwyd introspection 32 "$peer_pid" "$peer_base/api/oidc/introspect" post_form.lua "token=$peer_access" "$peer_auth"
done

cpu=$(awk -F: '/model name/ {sub(/^ /, "", $2); print $2; exit}' /proc/cpuinfo)
echo
python3 - "$results" "$runs" "$cpu" "$(nproc)" "$(cd "$repo" && git rev-parse --short HEAD)" "$cold_start_ms" "$idle_rss_mb" "$peer_started_ms" "$peer_idle_rss_mb" "$durability" <<'PY'
import collections, datetime, statistics, sys
path, runs, cpu, cores, commit, cold, idle, peer_cold, peer_idle, durability = sys.argv[1:]
rows = collections.defaultdict(list)
for line in open(path):
    parts = line.split()
    rows[(parts[0], parts[1], parts[2])].append(dict(p.split("=", 1) for p in parts[3:] if "=" in p))
def med(server, route, connections, key):
    runs_ = rows.get((server, route, connections), [])
    return statistics.median(float(r[key]) for r in runs_) if runs_ else float("nan")
def per_request(server, route, connections):
    # The switches counted over the sampled middle of the run, per request served in that time.
    runs_ = rows.get((server, route, connections), [])
    return statistics.median(int(r["switches"]) / max(float(r["rps"]) * int(r["sampled_seconds"]), 1) for r in runs_) if runs_ else float("nan")
ceiling = med("nginx", "ceiling", "8", "rps")
print(f"Gatehouse beside Glewlwyd 2.7.5 and nginx, {datetime.date.today()}, commit {commit}; {cpu}, {cores} cores; SQLite durability {durability}; medians of {runs} runs")
print(f"{'route':<20} {'conn':>5} {'Gatehouse req/s':>16} {'p99 ms':>7} {'cs/req':>7} {'Glewlwyd req/s':>15} {'p99 ms':>7} {'cs/req':>7} {'ratio':>6} {'x nginx':>8}")
for route, connections in [("jwks", "8"), ("jwks", "256"), ("healthz", "8"), ("client_credentials", "32"), ("client_credentials", "256"), ("introspection", "32")]:
    ours, theirs = med("gatehouse", route, connections, "rps"), med("glewlwyd", route, connections, "rps")
    ratio = ours / theirs if theirs == theirs and theirs > 0 else float("nan")
    print(f"{route:<20} {connections:>5} {ours:>16.0f} {med('gatehouse', route, connections, 'p99_ms'):>7.2f} {per_request('gatehouse', route, connections):>7.3f} "
          f"{theirs:>15.0f} {med('glewlwyd', route, connections, 'p99_ms'):>7.2f} {per_request('glewlwyd', route, connections):>7.3f} {ratio:>6.2f} {ours / ceiling:>8.3f}")
print(f"nginx (one worker) {ceiling:.0f} req/s at 8 connections")
print(f"cold start to the first 200: Gatehouse {cold} ms, Glewlwyd {peer_cold} ms; idle RSS: Gatehouse {idle} MB, Glewlwyd {peer_idle} MB")
print()
print("goals (issue 51)                                          figure      goal      met")
def goal(name, figure, text, met): print(f"{name:<57} {figure:<11} {text:<9} {'yes' if met else 'no'}")
cheapest = max(med("glewlwyd", "jwks", c, "rps") for c in ("8", "256"))
for connections in ("8", "256"):
    ours = med("gatehouse", "jwks", connections, "rps")
    goal(f"JWKS, {connections} connections, x the peer's cheapest route", f"{ours / cheapest:.2f}x", ">= 1.0x", ours >= cheapest)
    goal(f"JWKS, {connections} connections, x nginx", f"{ours / ceiling:.2f}x", ">= 0.3x", ours >= 0.3 * ceiling)
goal("healthz, 8 connections, x the peer's cheapest route", f"{med('gatehouse', 'healthz', '8', 'rps') / cheapest:.2f}x", ">= 1.0x", med("gatehouse", "healthz", "8", "rps") >= cheapest)
goal("JWKS p99 at 8 connections", f"{med('gatehouse', 'jwks', '8', 'p99_ms'):.2f} ms", "<= 2 ms", med("gatehouse", "jwks", "8", "p99_ms") <= 2)
goal("context switches per JWKS request (8 connections)", f"{per_request('gatehouse', 'jwks', '8'):.3f}", "<= 0.05", per_request("gatehouse", "jwks", "8") <= 0.05)
kept = med("gatehouse", "client_credentials", "256", "rps") / med("gatehouse", "client_credentials", "32", "rps")
goal("client_credentials at 256 of its rate at 32", f"{kept:.0%}", ">= 90%", kept >= 0.9)
goal("client_credentials p99 at 256", f"{med('gatehouse', 'client_credentials', '256', 'p99_ms'):.1f} ms", "< 50 ms", med("gatehouse", "client_credentials", "256", "p99_ms") < 50)
goal("idle RSS", f"{idle} MB", "< 40 MB", float(idle) < 40)
goal("cold start to the first 200", f"{cold} ms", "< 50 ms", int(cold) < 50)
PY
