#!/usr/bin/env bash
# Benchmarks the token endpoints of a running release build with wrk:
#   client_credentials grants, refresh grants, introspection, JWKS.
# Prints requests/s, p50/p90/p99/max latency and the server's peak RSS per scenario.
# Usage: bench/tokens.sh [--duration 10s] [--connections 32] [--threads 2] [--algorithm ES256|RS256] [--durability full|normal]
# Note: wrk and the broker share this machine's cores; the numbers are for the pair.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
algorithm=ES256
while [ $# -gt 0 ]; do
  case $1 in
    --algorithm) algorithm=$2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; } ;;
  esac
  shift 2
done
prepare
secret=$(head -c 32 /dev/urandom | base64 | tr -d '=+/')
export BENCH_SECRET=$secret
{ server_yaml; cat <<YAML; } >"$work/bench.yaml"
tokens:
  signingAlgorithm: $algorithm
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
apps:
  - id: bench
    secret: \${BENCH_SECRET}
    policy:
      identityProviders: [local]
      clientCredentialsGrant: true
      allowedScopes: [openid, profile, api]
      defaultScopes: [openid]
YAML
printf '%s\n' 'bench password 42' | "$bin" users add benchuser --config "$work/bench.yaml" >/dev/null
start_server "$work/bench.yaml"

auth=$(printf 'bench:%s' "$secret" | base64 -w0)
export BENCH_AUTH=$auth BENCH_LIB="$repo/bench/lib" BENCH_THREADS=$threads

# A client_credentials access token to introspect.
access=$(curl -sf -u "bench:$secret" "$base/oauth2/token" -d grant_type=client_credentials -d scope=api | jq -r .access_token)
# Refresh tokens from user sign-ins (flow API), at least one per connection.
for i in $(seq 1 $((connections * 2))); do
  flow=$(curl -sf -X POST "$base/v1/flows" -H 'Content-Type: application/json' \
    -d "{\"app\":\"bench\",\"provider\":\"local\",\"client_secret\":\"$secret\"}" | jq -r .flow)
  curl -sf -X POST "$base/v1/flows/$flow" -H 'Content-Type: application/json' \
    -d "{\"answer\":{\"username\":\"benchuser\",\"password\":\"bench password 42\"},\"client_secret\":\"$secret\"}" | jq -r .tokens.refresh_token
done >"$work/refresh-tokens"
export BENCH_TOKENS="$work/refresh-tokens"

reset_peak() { echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true; }

printf '\nGatehouse token benchmark: %s, durability %s, %s connections, %s wrk threads, %s per scenario, %s cores\n' \
  "$algorithm" "$durability" "$connections" "$threads" "$duration" "$(nproc)"
printf '%-22s %10s %9s %9s %9s %9s %8s %8s %12s\n' scenario req/s p50_ms p90_ms p99_ms max_ms errors non2xx peak_rss_MB
run() { # run NAME URL SCRIPT [BODY]
  local name=$1 url=$2 script=$3
  export BENCH_BODY=${4:-}
  reset_peak
  local out
  out=$(wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$repo/bench/lib/$script" "$url" | grep '^RESULT')
  eval "$(echo "$out" | sed 's/^RESULT //' | tr ' ' '\n' | sed 's/^/local /')"
  printf '%-22s %10s %9s %9s %9s %9s %8s %8s %12s\n' "$name" "$rps" "$p50_ms" "$p90_ms" "$p99_ms" "$max_ms" "$errors" "$non2xx" "$(rss_peak_mb)"
}
run client_credentials "$base/oauth2/token" post_form.lua "grant_type=client_credentials&scope=api"
run refresh_token "$base/oauth2/token" refresh.lua
run introspection "$base/oauth2/introspect" post_form.lua "token=$access"
run jwks "$base/oauth2/jwks" get.lua
echo
echo "refresh grants left in the pool must stay >0 for the refresh numbers to be valid (non2xx shows exhaustion)."
