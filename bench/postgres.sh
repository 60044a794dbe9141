#!/usr/bin/env bash
# Benchmarks the broker on PostgreSQL, with one node and with two nodes on this machine sharing one
# database (the same total load: two wrk processes with half the connections each, one per node).
# Scenarios: client_credentials, refresh rotation, jwt-bearer (FSSO assertions signed by PyJWT) and
# password sign-ins through the flow API (start + answer). Prints requests/s, p50/p99 latency, peak
# RSS, the 2-node/1-node ratio, and, from pg_stat_statements, the SQL statements and the write
# statements per operation (one node), then each scenario's statements one by one (calls per
# operation, and PostgreSQL's execution time per call).
# Usage: bench/postgres.sh [--duration 10s] [--connections 32] [--threads 2] [--assertions 15000]
#        [--scenarios client_credentials,refresh_token,jwt_bearer,password_signin]
# Note: wrk, the brokers and PostgreSQL share this machine's cores; the numbers are for the set.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
assertions=15000
scenarios=client_credentials,refresh_token,jwt_bearer,password_signin
while [ $# -gt 0 ]; do
  case $1 in
    --assertions) assertions=$2 ;;
    --scenarios) scenarios=$2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; } ;;
  esac
  shift 2
done
prepare postgresql python3-venv openssl
venv="$repo/.build/e2e-venv"
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import jwt, cryptography' 2>/dev/null || "$venv/bin/python" -m pip install -q pyjwt cryptography
pg=$(mktemp -u /tmp/gatehouse-bench-pg.XXXXXX)
pid2=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$pid2" ] && kill "$pid2" 2>/dev/null; "$repo/Tests/postgres/postgres.sh" remove "$pg" >/dev/null 2>&1; rm -rf "$work"' EXIT
url=$("$repo/Tests/postgres/postgres.sh" start "$pg" "$(free_port)")
sql() { "$repo/Tests/postgres/postgres.sh" psql "$pg" -tA -c "$1"; }
sql "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null

secret=$(head -c 32 /dev/urandom | base64 | tr -d '=+/')
export BENCH_SECRET=$secret GATEHOUSE_KEK=$("$bin" keys generate-kek)
fsso_keys
cat >"$work/bench.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
  issuer: https://login.bench.example
storage:
  postgres:
    url: $url
    poolSize: 16
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
$(fsso_provider_yaml partner)
apps:
  - id: bench
    secret: \${BENCH_SECRET}
    policy:
      identityProviders: [local]
      clientCredentialsGrant: true
      allowedScopes: [openid, profile, api]
      defaultScopes: [openid]
      lockout: {maxFlowStartsPerIPPerMinute: 1000000, maxFailedAuthenticationsPerIP: 1000000}
  - id: partner
    policy:
      identityProviders: [acme-sso]
      lockout: {maxFlowStartsPerIPPerMinute: 1000000, maxFailedAuthenticationsPerIP: 1000000}
YAML
printf '%s\n' 'bench password 42' | "$bin" users add benchuser --config "$work/bench.yaml" >/dev/null
for i in $(seq -w 1 64); do printf '%s\n' 'bench password 42' | "$bin" users add "bench$i" --config "$work/bench.yaml" >/dev/null; done
port2=$(free_port)
base2="http://127.0.0.1:$port2"
start_second() {
  "$bin" serve --config "$work/bench.yaml" --listen "127.0.0.1:$port2" --log-level warning >"$work/serve2.log" 2>&1 &
  pid2=$!
  for _ in $(seq 1 100); do curl -sf "$base2/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "the second node did not start" >&2; tail -20 "$work/serve2.log" >&2; return 1
}
start_server "$work/bench.yaml"
start_second

auth=$(printf 'bench:%s' "$secret" | base64 -w0)
export BENCH_AUTH=$auth BENCH_LIB="$repo/bench/lib" BENCH_CLIENT=partner
export BENCH_PROVIDER=local BENCH_USERS=64 BENCH_USER_FORMAT=bench%02d BENCH_PASSWORD_FORMAT="bench password 42"
refresh_pool() { # refresh_pool FILE: two refresh tokens per connection, from password sign-ins
  for _ in $(seq 1 $((connections * 2))); do
    flow=$(curl -sf -u "bench:$secret" -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"bench","provider":"local"}' | jq -r .flow)
    curl -sf -u "bench:$secret" -X POST "$base/v1/flows/$flow" -H 'Content-Type: application/json' \
      -d '{"answer":{"username":"benchuser","password":"bench password 42"}}' | jq -r .tokens.refresh_token
  done >"$1"
}
# One wrk per node: `wrk_on URL CONNECTIONS THREADS SCRIPT TOKENS` prints its RESULT (and SIGNINS) lines.
wrk_on() {
  BENCH_TOKENS=$5 BENCH_THREADS=$3 wrk -t"$3" -c"$2" -d"$duration" --latency -s "$repo/bench/lib/$4" "$1" | grep -E '^(RESULT|SIGNINS)'
}
field() { echo "$1" | grep '^RESULT' | tr ' ' '\n' | sed -n "s/^$2=//p"; }
signins() { echo "$1" | grep '^SIGNINS' | tr ' ' '\n' | sed -n 's/^per_second=//p'; }
breakdown() { # breakdown NAME OPERATIONS: the statements since the last reset, most called first
  printf '\n%s: calls/op, execution ms per call, statement\n' "$1" >>"$work/breakdown"
  sql "SELECT to_char(calls::numeric / $2, 'FM990.00'), to_char(total_exec_time / calls, 'FM990.000'),
              left(regexp_replace(query, '\s+', ' ', 'g'), 110)
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
         AND query !~* 'pg_stat_statements' AND calls >= $2 / 20 ORDER BY calls DESC LIMIT 15" | tr '|' ' ' >>"$work/breakdown"
}

statements() { # statements OPERATIONS: total and write statements per operation since the last reset
  sql "SELECT round(sum(calls)::numeric / $1, 2), round((sum(calls) FILTER (WHERE query ~* '^\s*(insert|update|delete)\M' OR (query ~* '^\s*with\M' AND query ~* '\m(insert|update|delete)\M')))::numeric / $1, 2)
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query !~* 'pg_stat_statements'"
}

printf '\nGatehouse on PostgreSQL: %s connections in all, %s per scenario, %s cores (wrk, brokers and PostgreSQL share them)\n' "$connections" "$duration" "$(nproc)"
printf '%-20s %9s %8s %8s %9s %8s %8s %7s %8s %12s %9s\n' scenario 1node_rps p50_ms p99_ms 2node_rps p50_ms p99_ms ratio non2xx stmts/op writes/op
half=$((connections / 2)); [ "$half" -ge 1 ] || half=1
warm_up() {
  BENCH_BODY="grant_type=client_credentials&scope=api" wrk -t1 -c"$connections" -d2s -s "$repo/bench/lib/post_form.lua" "$base/oauth2/token" >/dev/null &
  local first=$!
  BENCH_BODY="grant_type=client_credentials&scope=api" wrk -t1 -c"$connections" -d2s -s "$repo/bench/lib/post_form.lua" "$base2/oauth2/token" >/dev/null
  # Only that wrk: the brokers are background jobs of this script too.
  wait "$first"
}
scenario() { # scenario NAME PATH SCRIPT BODY PREPARE(refresh|assertions|none)
  local name=$1 path=$2 script=$3 make=$5
  [[ ",$scenarios," == *",$name,"* ]] || return 0
  export BENCH_BODY=$4
  local tokens1="$work/$name.1" tokens2a="$work/$name.2a" tokens2b="$work/$name.2b"
  case $make in
    refresh) refresh_pool "$tokens1"; refresh_pool "$tokens2a"; refresh_pool "$tokens2b" ;;
    assertions) sign_assertions "$tokens1" "$assertions"; sign_assertions "$tokens2a" $((assertions / 2)); sign_assertions "$tokens2b" $((assertions / 2)) ;;
    *) : >"$tokens1"; : >"$tokens2a"; : >"$tokens2b" ;;
  esac
  # Both nodes warm (their connection pools full) before anything is measured: a pool left idle
  # for a minute has closed its connections, and opening them would be measured otherwise.
  warm_up
  # One node, all the connections; statements counted for this run only.
  sql "SELECT pg_stat_statements_reset()" >/dev/null
  local one ops
  one=$(wrk_on "$base$path" "$connections" "$threads" "$script" "$tokens1")
  ops=$(field "$one" requests)
  [ "$script" = flow_signin.lua ] && ops=$(echo "$one" | grep '^SIGNINS' | tr ' ' '\n' | sed -n 's/^completed=//p')
  local counts
  counts=$(statements "$ops")
  breakdown "$name" "$ops"
  # Two nodes, half the connections each, at the same time.
  wrk_on "$base$path" "$half" 1 "$script" "$tokens2a" >"$work/$name.a" &
  local first=$!
  wrk_on "$base2$path" "$half" 1 "$script" "$tokens2b" >"$work/$name.b"
  wait "$first"
  local a b rps1 rps2
  a=$(cat "$work/$name.a") b=$(cat "$work/$name.b")
  if [ "$script" = flow_signin.lua ]; then
    rps1=$(signins "$one")
    rps2=$(( $(signins "$a") + $(signins "$b") ))
  else
    rps1=$(field "$one" rps)
    rps2=$(( $(field "$a" rps) + $(field "$b" rps) ))
  fi
  # Latency of the two-node run: the mean of the nodes' medians, the worse of their p99s.
  local p50_2 p99_2
  p50_2=$(awk -v x="$(field "$a" p50_ms)" -v y="$(field "$b" p50_ms)" 'BEGIN {printf "%.2f", (x + y) / 2}')
  p99_2=$(awk -v x="$(field "$a" p99_ms)" -v y="$(field "$b" p99_ms)" 'BEGIN {printf "%.2f", (x > y ? x : y)}')
  local non2xx=$(( $(field "$one" non2xx) + $(field "$a" non2xx) + $(field "$b" non2xx) ))
  printf '%-20s %9s %8s %8s %9s %8s %8s %7s %8s %12s %9s\n' "$name" "$rps1" "$(field "$one" p50_ms)" "$(field "$one" p99_ms)" "$rps2" "$p50_2" "$p99_2" \
    "$(awk -v x="$rps2" -v y="$rps1" 'BEGIN {printf "%.2f", (y > 0 ? x / y : 0)}')" "$non2xx" "$(echo "$counts" | cut -d'|' -f1)" "$(echo "$counts" | cut -d'|' -f2)"
}
scenario client_credentials /oauth2/token post_form.lua "grant_type=client_credentials&scope=api" none
scenario refresh_token /oauth2/token refresh.lua "" refresh
scenario jwt_bearer /oauth2/token assertions.lua "" assertions
scenario password_signin /v1/flows flow_signin.lua "" none
echo "peak RSS of node 1: $(rss_peak_mb) MB"
cat "$work/breakdown" 2>/dev/null || true
echo
echo "rps for password_signin is sign-ins/s (two requests each); stmts/op and writes/op count SQL statements"
echo "(BEGIN and COMMIT included) per operation in the 1-node run, from pg_stat_statements. non2xx must stay 0"
echo "(refresh pools and pre-signed assertions that run out show there; raise --assertions)."
