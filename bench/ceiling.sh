#!/usr/bin/env bash
# Measures Gatehouse against the machine's ceiling in the same run: nginx (Debian, one worker,
# `return 200`) on a loopback port next to the broker, then each route of the broker, in turns,
# `--runs` times; prints the median of each (requests/s, p50/p99, ratio to nginx) and the broker's
# idle RSS, peak RSS under these loads and cold start to the first 200.
#   routes: JWKS (8 and 256 connections), client_credentials ES256 (8, 32, 256) and RS256 (32),
#   introspection (32), refresh rotation (32), JWT bearer exchange (32, fsso-jwt), password sign-in
#   through the flow API (32; compared with what the password hash alone allows on every core).
# Usage: bench/ceiling.sh [--duration 10s] [--runs 3] [--durability full|normal] [--bcrypt-cost 10] [--only REGEX]
# (the connection counts are the goals'; --connections and --threads are not used here)
# Note: wrk (2 threads), nginx and the broker share this machine's cores, as they did for the goals.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
runs=3 bcrypt_cost=10 only=.
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2 ;;
    --bcrypt-cost) bcrypt_cost=$2 ;;
    --only) only=$2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; } ;;
  esac
  shift 2
done
prepare nginx-light openssl python3-venv
venv="$repo/.build/e2e-venv"
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import jwt, cryptography' 2>/dev/null || "$venv/bin/python" -m pip install -q pyjwt cryptography
nginx_pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null; rm -rf "$work"' EXIT
case $duration in
  *[0-9]s) seconds=${duration%s} ;;
  *) echo "--duration must be whole seconds, e.g. 10s" >&2; exit 2 ;;
esac

# The ceiling: nginx answering a constant, one worker (the broker gets no more cores than it).
start_nginx
wait_for() { # wait_for URL PID LOG: until URL answers 200, for at most 30 s
  for _ in $(seq 1 3000); do
    curl -sf "$1" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.01
  done
  echo "$1 did not answer:" >&2; tail -20 "$3" >&2; exit 1
}
wait_for "http://127.0.0.1:$nginx_port/" "$nginx_pid" "$work/nginx/error.log"

# The broker: a confidential app for the grants, a cheap local provider for the refresh-token pool,
# a local provider at --bcrypt-cost for the sign-ins, an fsso-jwt issuer for the bearer exchanges.
secret=$(head -c 32 /dev/urandom | base64 | tr -d '=+/')
export BENCH_SECRET=$secret
fsso_keys
broker_yaml() { # broker_yaml ALGORITHM DATABASE
  server_yaml "$2"
  cat <<YAML
tokens:
  signingAlgorithm: $1
lockout:
  maxFlowStartsPerIPPerMinute: 1000000
providers:
  - id: quick
    type: local
    config: {bcryptCost: 4}
  - id: local
    type: local
    config: {bcryptCost: $bcrypt_cost}
$(fsso_provider_yaml bearer)
apps:
  - id: bench
    secret: \${BENCH_SECRET}
    policy:
      identityProviders: [quick, local, acme-sso]
      clientCredentialsGrant: true
      allowedScopes: [openid, profile, api]
      defaultScopes: [openid]
      # RS256 costs ~0.7 ms of CPU per signature (docs/operations.md); the routes here measure the
      # broker, not RSA. client_credentials_RS256 measures RSA on its own.
      idTokenSigningAlg: ES256
      lockout:
        maxFlowStartsPerIPPerMinute: 1000000
  - id: bearer
    policy:
      identityProviders: [acme-sso]
      idTokenSigningAlg: ES256
      lockout:
        maxFlowStartsPerIPPerMinute: 1000000
YAML
}
broker_yaml ES256 "$work/bench.sqlite" >"$work/bench.yaml"
users=64
# The CLI repeats the config's warnings (the cheap `quick` provider's cost) at every call: kept in a
# log, shown only when a call fails.
add_user() { # add_user NAME PROVIDER PASSWORD
  printf '%s\n' "$3" | "$bin" users add "$1" --provider "$2" --config "$work/bench.yaml" >/dev/null 2>"$work/cli.log" \
    || { cat "$work/cli.log" >&2; exit 1; }
}
for i in $(seq 1 $users); do add_user "user$i" local "bench password $i"; done
add_user pooluser quick 'bench password 0'

# Cold start: from exec to the first 200 on /healthz.
started=$(date +%s%N)
"$bin" serve --config "$work/bench.yaml" --log-level warning >"$work/serve.log" 2>&1 &
pid=$!
wait_for "$base/healthz" "$pid" "$work/serve.log"
cold_start_ms=$(( ($(date +%s%N) - started) / 1000000 ))
sleep 2
idle_rss_mb=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$pid/status")

auth=$(printf 'bench:%s' "$secret" | base64 -w0)
export BENCH_AUTH=$auth BENCH_LIB="$repo/bench/lib" BENCH_THREADS=2
access=$(curl -sf -u "bench:$secret" "$base/oauth2/token" -d grant_type=client_credentials -d scope=api | jq -r .access_token)

# Refresh tokens, two per connection (each response hands the next one to its thread).
refresh_pool() {
  for _ in $(seq 1 $((32 * 2))); do
    flow=$(curl -sf -X POST "$base/v1/flows" -H 'Content-Type: application/json' \
      -d "{\"app\":\"bench\",\"provider\":\"quick\",\"client_secret\":\"$secret\"}" | jq -r .flow)
    curl -sf -X POST "$base/v1/flows/$flow" -H 'Content-Type: application/json' \
      -d "{\"answer\":{\"username\":\"pooluser\",\"password\":\"bench password 0\"},\"client_secret\":\"$secret\"}" | jq -r .tokens.refresh_token
  done >"$work/refresh-tokens"
}

# The password hash alone on every core, measured by the broker binary itself.
hash_rate=$("$bin" benchmark-password-hash --cost "$bcrypt_cost" --seconds 3 | awk '{print $1}')

results="$work/results"
: >"$results"
peak_kb=0
measure() { # measure NAME CONNECTIONS URL SCRIPT [BODY]: one wrk run, appended to the results
  local name=$1 connections=$2 url=$3 script=$4 out
  [[ $name =~ $only ]] || return 0
  export BENCH_BODY=${5:-}
  out=$(wrk -t2 -c"$connections" -d"$duration" --latency -s "$repo/bench/lib/$script" "$url" | grep '^RESULT\|^SIGNINS' | tr '\n' ' ')
  echo "$name $connections $out" >>"$results"
  local peak
  peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  [ "$peak" -gt "$peak_kb" ] && peak_kb=$peak
  printf '  %-26s %s\n' "$name/$connections" "$(echo "$out" | grep -o 'rps=[0-9]*') $(echo "$out" | grep -o 'p99_ms=[0-9.]*') $(echo "$out" | grep -o 'non2xx=[0-9]*')"
}

export BENCH_APP=bench BENCH_PROVIDER=local BENCH_USERS=$users BENCH_USER_FORMAT='user%d' BENCH_PASSWORD_FORMAT='bench password %d'
for run in $(seq 1 "$runs"); do
  echo "run $run of $runs"
  measure nginx 8 "http://127.0.0.1:$nginx_port/" get.lua
  measure jwks 8 "$base/oauth2/jwks" get.lua
  measure jwks 256 "$base/oauth2/jwks" get.lua
  measure client_credentials_ES256 8 "$base/oauth2/token" post_form.lua "grant_type=client_credentials&scope=api"
  measure client_credentials_ES256 32 "$base/oauth2/token" post_form.lua "grant_type=client_credentials&scope=api"
  measure client_credentials_ES256 256 "$base/oauth2/token" post_form.lua "grant_type=client_credentials&scope=api"
  measure introspection 32 "$base/oauth2/introspect" post_form.lua "token=$access"
  if [[ refresh_token =~ $only ]]; then
    refresh_pool
    BENCH_TOKENS="$work/refresh-tokens" measure refresh_token 32 "$base/oauth2/token" refresh.lua
  fi
  if [[ jwt_bearer =~ $only ]]; then
    sign_assertions "$work/assertions" $((4000 * seconds))
    BENCH_TOKENS="$work/assertions" BENCH_CLIENT=bearer measure jwt_bearer 32 "$base/oauth2/token" assertions.lua
  fi
  measure password_signin 32 "$base/v1/flows" flow_signin.lua
done
peak_rss_mb=$(awk -v kb="$peak_kb" 'BEGIN {printf "%.1f", kb/1024}')

# RS256 access tokens need a broker of their own (the signing algorithm is the broker's).
if [[ client_credentials_RS256 =~ $only ]]; then
  kill "$pid"; wait "$pid" 2>/dev/null || true
  broker_yaml RS256 "$work/rsa.sqlite" >"$work/rsa.yaml"
  "$bin" serve --config "$work/rsa.yaml" --log-level warning >"$work/rsa.log" 2>&1 &
  pid=$!
  wait_for "$base/healthz" "$pid" "$work/rsa.log"
  for run in $(seq 1 "$runs"); do
    measure nginx_again 8 "http://127.0.0.1:$nginx_port/" get.lua
    measure client_credentials_RS256 32 "$base/oauth2/token" post_form.lua "grant_type=client_credentials&scope=api"
  done
fi

echo
"$venv/bin/python" - "$results" "$hash_rate" "$cold_start_ms" "$idle_rss_mb" "$peak_rss_mb" "$durability" "$bcrypt_cost" "$(nproc)" "$(cd "$repo" && git rev-parse --short HEAD)" "$runs" <<'PY'
import sys, statistics, collections, datetime
path, hash_rate, cold, idle, peak, durability, cost, cores, commit, runs = sys.argv[1:]
rows = collections.OrderedDict()
for line in open(path):
    parts = line.split()
    name, connections, fields = parts[0], parts[1], dict(p.split("=", 1) for p in parts[2:] if "=" in p)
    if name == "nginx_again": name = "nginx"
    rows.setdefault((name, connections), []).append(fields)
def median(key, runs): return statistics.median(float(r[key]) for r in runs)
ceiling = median("rps", rows[("nginx", "8")]) if ("nginx", "8") in rows else float("nan")
print(f"Gatehouse against the machine's ceiling, {datetime.date.today()}, commit {commit}: {cores} cores, durability {durability}, medians of {runs} runs")
print(f"{'route':<28} {'conn':>5} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'x nginx':>8} {'errors':>7} {'non2xx':>7}")
for (name, connections), runs in rows.items():
    rps = median("rps", runs)
    errors = sum(int(r["errors"]) for r in runs)
    non2xx = sum(int(r["non2xx"]) for r in runs)
    ratio = f"{rps / ceiling:.3f}" if ceiling == ceiling else "-"  # NaN: nginx was not measured
    print(f"{name:<28} {connections:>5} {rps:>9.0f} {median('p50_ms', runs):>8.2f} {median('p99_ms', runs):>8.2f} {ratio:>8} {errors:>7} {non2xx:>7}")
    if name == "password_signin":
        signins = median("per_second", runs)
        print(f"{'  sign-ins completed':<28} {'':>5} {signins:>9.1f}   the bcrypt cost {cost} hash alone on every core: {float(hash_rate):.1f}/s, ratio {signins / float(hash_rate):.3f}")
print(f"cold start to the first 200: {cold} ms; idle RSS {idle} MB; peak RSS under these loads {peak} MB")
PY
echo "(the sign-in flow's requests/s count two requests per sign-in; non2xx of refresh_token or jwt_bearer means the pool ran out)"
