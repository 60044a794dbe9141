#!/usr/bin/env bash
# Benchmarks LDAP sign-ins (search-then-bind plus group lookup) through the flow API against a release
# build and the throw-away OpenLDAP server of the tests (Tests/ldap/slapd.sh, 50 load users). Each
# sign-in is two requests: start the flow, answer it. Prints sign-ins/s, request latency percentiles and
# the broker's peak RSS.
# Usage: bench/ldap.sh [--duration 10s] [--connections 32] [--threads 2] [--pool 8] [--durability full|normal] [--starttls]
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
pool=8 starttls=false
while [ $# -gt 0 ]; do
  case $1 in
    --pool) pool=$2; shift 2 ;;
    --starttls) starttls=true; shift ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; }; shift 2 ;;
  esac
done
prepare slapd ldap-utils openssl
ldap_port=$(free_port)
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; "$repo/Tests/ldap/slapd.sh" stop "$work/slapd"; rm -rf "$work"' EXIT
SLAPD_DEBUG=0 "$repo/Tests/ldap/slapd.sh" start "$work/slapd" "$ldap_port" >/dev/null
{ server_yaml; cat <<YAML; } >"$work/bench.yaml"
providers:
  - id: corp-ldap
    type: ldap
    config:
      url: ldap://127.0.0.1:$ldap_port
      startTLS: $starttls
      rootCA: $work/slapd/ca.pem
      bindDN: cn=gatehouse,ou=services,dc=example,dc=org
      bindPassword: service-secret
      maxConnections: $pool
      userSearch:
        baseDN: ou=people,dc=example,dc=org
        filter: (objectClass=inetOrgPerson)
        username: uid
      groupSearch:
        baseDN: ou=groups,dc=example,dc=org
        filter: (objectClass=groupOfNames)
apps:
  - id: bench
    policy:
      identityProviders: [corp-ldap]
      lockout:
        maxFlowStartsPerIPPerMinute: 1000000
YAML
start_server "$work/bench.yaml"
export BENCH_LIB="$repo/bench/lib" BENCH_PROVIDER=corp-ldap BENCH_USERS=50 BENCH_USER_FORMAT=load%02d BENCH_PASSWORD_FORMAT=load-password-%02d
out=$(wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$repo/bench/lib/flow_signin.lua" "$base")
printf '\nGatehouse LDAP sign-in benchmark: pool %s, StartTLS %s, durability %s, %s connections, %s wrk threads, %s, %s cores (slapd on the same cores)\n' \
  "$pool" "$starttls" "$durability" "$connections" "$threads" "$duration" "$(nproc)"
echo "$out" | grep '^SIGNINS' | sed 's/^SIGNINS /sign-ins: /'
echo "$out" | grep '^RESULT' | sed 's/^RESULT /requests (start + answer): /'
echo "peak RSS: $(rss_peak_mb) MB"
echo "(non2xx must stay 0)"
