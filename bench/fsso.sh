#!/usr/bin/env bash
# Benchmarks JWT bearer exchanges (RFC 7523, fsso-jwt) against a running release build with wrk:
# assertions signed by PyJWT with an openssl RSA key, each used once. Prints requests/s, latency
# percentiles and the server's peak RSS.
# Usage: bench/fsso.sh [--duration 5s] [--connections 32] [--threads 2] [--tokens 12000] [--durability full|normal]
set -euo pipefail
duration=5s
source "$(dirname "$0")/lib/common.sh"
count=12000
while [ $# -gt 0 ]; do
  case $1 in
    --tokens) count=$2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; } ;;
  esac
  shift 2
done
prepare openssl python3-venv
venv="$repo/.build/e2e-venv"
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import jwt, cryptography' 2>/dev/null || "$venv/bin/python" -m pip install -q pyjwt cryptography

fsso_keys
{ server_yaml; cat <<YAML; } >"$work/bench.yaml"
providers:
$(fsso_provider_yaml bench)
apps:
  - id: bench
    policy:
      identityProviders: [acme-sso]
      lockout:
        maxFlowStartsPerIPPerMinute: 1000000
YAML
echo "signing $count assertions with PyJWT..."
"$venv/bin/python" - "$work/key.pem" "$count" >"$work/tokens" <<'PY'
import sys, time, uuid, jwt
key, count = open(sys.argv[1]).read(), int(sys.argv[2])
now = int(time.time())
for i in range(count):
    claims = {"iss": "acme", "sub": f"user{i % 500}", "aud": "identity-service", "jti": uuid.uuid4().hex, "iat": now, "exp": now + 3000}
    print(jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"}))
PY
start_server "$work/bench.yaml"
export BENCH_TOKENS="$work/tokens" BENCH_THREADS=$threads BENCH_LIB="$repo/bench/lib"
out=$(wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$repo/bench/lib/assertions.lua" "$base/oauth2/token" | grep '^RESULT')
printf '\nGatehouse JWT bearer benchmark: durability %s, %s connections, %s wrk threads, %s, %s cores\n' "$durability" "$connections" "$threads" "$duration" "$(nproc)"
echo "$out" | sed 's/^RESULT //'
echo "peak RSS: $(rss_peak_mb) MB"
echo "(non2xx must stay 0: a non-zero count means the pre-signed assertions ran out; raise --tokens)"
