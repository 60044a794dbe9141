#!/usr/bin/env bash
# The whole broker under attack and failure, against real peers (OpenLDAP slapd, an SMTP server,
# the custom-API stand-in), logging at debug level:
#   1. slow clients: sockets that send nothing or a byte at a time are cut off; others are served;
#   2. fuzzing: schemathesis generates requests for every operation of docs/openapi.yaml (and the
#      stateful links it declares): zero 5xx, every response conforms to the document;
#   3. crashes: kill -9 during sign-ups, refreshes and admin writes, several rounds;
#   4. outages: the directory, the SMTP server and the custom API stopped mid-load, then back;
#   5. the scan of every log the tests wrote (.build/test-logs) for the secrets they used.
# Bounded in time (about two minutes). Needs slapd, ldap-utils, openssl, python3-venv (make test-deps).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GATEHOUSE_BIN:-"$repo/.build/debug/gatehouse"}
work=$(mktemp -d /tmp/gatehouse-hardening.XXXXXX)
logs="$repo/.build/test-logs"
mkdir -p "$logs"
pids=()
status=0

cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  # Peers the outage phase restarted have their pids in files only.
  for file in "$work/smtp.pid" "$work/api.pid"; do [ -s "$file" ] && kill -9 "$(cat "$file")" 2>/dev/null || true; done
  [ -n "${broker_pid:-}" ] && kill -9 "$broker_pid" 2>/dev/null || true
  "$repo/Tests/ldap/slapd.sh" stop "$work/slapd" >/dev/null 2>&1 || true
  cp "$work/broker.log" "$logs/hardening-broker.log" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

venv="$repo/.build/hardening-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import schemathesis, requests, aiosmtpd' 2>/dev/null || "$venv/bin/python" -m pip install -q schemathesis requests aiosmtpd
py="$venv/bin/python"

free_port() { python3 "$repo/Tests/lib/free_port.py"; }
port=$(free_port); ldap_port=$(free_port); smtp_port=$(free_port); api_port=$(free_port)
base="http://127.0.0.1:$port"

# The peers.
"$repo/Tests/ldap/slapd.sh" start "$work/slapd" "$ldap_port" >"$work/slapd.log" 2>&1 || { echo "FAIL slapd:"; cat "$work/slapd.log"; exit 1; }
start_smtp() {
  "$py" "$repo/Tests/email/smtp_server.py" --maildir "$work/mail" --port-file "$work/smtp-port" --port "$smtp_port" >>"$work/smtp.log" 2>&1 &
  smtp_pid=$!; pids+=("$smtp_pid"); echo "$smtp_pid" >"$work/smtp.pid"
  for _ in $(seq 1 100); do [ -s "$work/smtp-port" ] && break; sleep 0.05; done
}
start_api() {
  "$py" "$repo/Tests/custom-api/app_api.py" --secret="$CUSTOM_SECRET" --port-file "$work/api-port" --port "$api_port" --log "$work/api-calls.jsonl" >>"$work/api.log" 2>&1 &
  api_pid=$!; pids+=("$api_pid"); echo "$api_pid" >"$work/api.pid"
  for _ in $(seq 1 100); do [ -s "$work/api-port" ] && break; sleep 0.05; done
}
secret() { python3 -c 'import secrets; print(secrets.token_urlsafe(32))'; }
export CUSTOM_SECRET GATEHOUSE_ADMIN_TOKEN FUZZ_SECRET LDAP_BIND_PASSWORD=service-secret
CUSTOM_SECRET=$(secret); GATEHOUSE_ADMIN_TOKEN=$(secret); FUZZ_SECRET=$(secret)
start_smtp
start_api

"$bin" keys generate-kek >"$work/kek"
chmod 600 "$work/kek"
# Every secret this run uses, for the log scan.
printf '%s\n' "$CUSTOM_SECRET" "$GATEHOUSE_ADMIN_TOKEN" "$FUZZ_SECRET" "$LDAP_BIND_PASSWORD" "$(cat "$work/kek")" alice-password-1 >"$logs/hardening.secrets"

high='{maxFailedAuthenticationsPerIP: 1000000, maxFailedAuthenticationsPerClient: 1000000, maxFailedAttemptsPerIP: 100000, maxFlowStartsPerIPPerMinute: 1000000, maxFailedAttemptsPerAccount: 1000}'
cat >"$work/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
  idleTimeout: 2s
storage:
  sqlite: {path: $work/data/gatehouse.sqlite}
keys:
  encryptionKeyFile: $work/kek
# The fuzzer and the load come from one address: the limits must not end the run early.
lockout: $high
mail:
  transport: smtp
  from: Gatehouse <noreply@gatehouse.test>
  smtp: {host: 127.0.0.1, port: $smtp_port, security: none}
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
  - id: corp-ldap
    type: ldap
    config:
      url: ldap://127.0.0.1:$ldap_port
      startTLS: true
      rootCA: $work/slapd/ca.pem
      bindDN: cn=gatehouse,ou=services,dc=example,dc=org
      bindPassword: \${LDAP_BIND_PASSWORD}
      userSearch:
        baseDN: ou=people,dc=example,dc=org
        filter: (objectClass=inetOrgPerson)
        username: uid
      operationTimeout: 1s
  - id: email
    type: email-code
    config:
      resend: {maxPerIP: 100000, maxPerAddress: 1000}
  # The activation plugin's routes (/v1/activations, invitations, /activate) exist only with it.
  - id: device
    type: device-key
  - id: activation
    type: activation
    config: {deviceKeys: device, hashCost: 4}
  - id: bank
    type: custom-api
    config:
      url: http://127.0.0.1:$api_port/register
      authentication: hmac
      secret: \${CUSTOM_SECRET}
      timeout: 2s
apps:
  - id: fuzz
    secret: \${FUZZ_SECRET}
    redirectURIs: [http://127.0.0.1:9/callback]
    policy:
      identityProviders: [local, corp-ldap, email, bank]
      selfRegistration: true
      clientCredentialsGrant: true
      allowedScopes: [openid, profile, email, offline_access]
      lockout: $high
  - id: native
    redirectURIs: [http://127.0.0.1:9/native]
    policy:
      identityProviders: [local, corp-ldap, email, bank]
      selfRegistration: true
      allowedScopes: [openid, profile, email, offline_access]
      lockout: $high
      # The crash test proves strict rotation: no rotated-away token ever works again.
      refreshReuseGrace: 0s
YAML
broker=("$bin" serve --config "$work/gatehouse.yaml" --log-level debug)
start_broker() {
  "${broker[@]}" >>"$work/broker.log" 2>&1 &
  broker_pid=$!
  for _ in $(seq 1 200); do curl -sf "$base/healthz" >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "FAIL the broker did not start"; tail -20 "$work/broker.log"; exit 1
}
stop_broker() { kill -TERM "$broker_pid"; wait "$broker_pid" 2>/dev/null || true; broker_pid=""; }
started=$(date +%s)

echo "- 1. slow clients (server.idleTimeout 2 s, body deadline 10 s)"
start_broker
"$py" "$repo/Tests/hardening/hardening.py" slow --base "$base" --idle-timeout 2 || status=1

echo "- 2. fuzzing docs/openapi.yaml with schemathesis (at $(($(date +%s) - started)) s)"
before=$(grep -c 'route=' "$work/broker.log" || true)
fuzz() { # fuzz NAME ARGS...: one schemathesis run; its summary goes to the output
  local name=$1; shift
  if "$venv/bin/st" run "$repo/docs/openapi.yaml" --url "$base" --max-examples 60 --workers 1 --request-timeout 10 \
      --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
      --phases examples,coverage,fuzzing,stateful --suppress-health-check all --no-color "$@" >"$work/fuzz-$name.out" 2>&1; then
    echo "ok   schemathesis ($name): $(grep -E 'Selected:|[0-9]+ generated|API Links:|Scenarios:' "$work/fuzz-$name.out" | sed 's/  */ /g' | tr '\n' ';')"
  else
    echo "FAIL schemathesis ($name):"; tail -60 "$work/fuzz-$name.out"; status=1
  fi
  cp "$work/fuzz-$name.out" "$logs/fuzz-$name.out"
}
fuzz admin --include-path-regex '^/admin/' -H "Authorization: Bearer $GATEHOUSE_ADMIN_TOKEN"
fuzz public --exclude-path-regex '^/admin/' -a "fuzz:$FUZZ_SECRET"
after=$(grep -c 'route=' "$work/broker.log" || true)
server_errors=$(grep 'route=' "$work/broker.log" | grep -c 'status=5[0-9][0-9]' || true)
requests=$((after - before))
if [ "$requests" -ge 3000 ] && [ "$server_errors" -eq 0 ]; then
  echo "ok   the fuzzers sent $requests requests; the broker answered none of them with a 5xx"
else
  echo "FAIL the fuzzers sent $requests requests (at least 3000 wanted); $server_errors answered 5xx:"
  grep 'route=' "$work/broker.log" | grep 'status=5[0-9][0-9]' | head -10
  status=1
fi
stop_broker
# The fuzzers disabled, deleted and re-keyed apps at will: the rest starts from a fresh database.
rm -rf "$work/data"

echo "- 3. kill -9 during sign-ups, refreshes and admin writes (at $(($(date +%s) - started)) s)"
"$py" "$repo/Tests/hardening/hardening.py" crash --base "$base" --admin-token="$GATEHOUSE_ADMIN_TOKEN" --db "$work/data/gatehouse.sqlite" \
  --log "$work/broker.log" --secrets "$logs/hardening.secrets" --rounds 5 -- "${broker[@]}" || status=1

echo "- 4. outages: directory, SMTP server, custom API stopped mid-load (at $(($(date +%s) - started)) s)"
start_broker
"$py" "$repo/Tests/hardening/hardening.py" outages --base "$base" --admin-token="$GATEHOUSE_ADMIN_TOKEN" \
  --ldap-port "$ldap_port" --smtp-port "$smtp_port" --api-port "$api_port" \
  --stop-ldap "'$repo/Tests/ldap/slapd.sh' stop '$work/slapd'" --start-ldap "'$repo/Tests/ldap/slapd.sh' start '$work/slapd' $ldap_port >/dev/null" \
  --stop-smtp "kill -9 \$(cat '$work/smtp.pid')" \
  --start-smtp "rm -f '$work/smtp-port'; '$py' '$repo/Tests/email/smtp_server.py' --maildir '$work/mail' --port-file '$work/smtp-port' --port $smtp_port >>'$work/smtp.log' 2>&1 & echo \$! >'$work/smtp.pid'; for i in \$(seq 1 100); do [ -s '$work/smtp-port' ] && break; sleep 0.05; done" \
  --stop-api "kill -9 \$(cat '$work/api.pid')" \
  --start-api "rm -f '$work/api-port'; '$py' '$repo/Tests/custom-api/app_api.py' --secret='$CUSTOM_SECRET' --port-file '$work/api-port' --port $api_port --log '$work/api-calls.jsonl' >>'$work/api.log' 2>&1 & echo \$! >'$work/api.pid'; for i in \$(seq 1 100); do [ -s '$work/api-port' ] && break; sleep 0.05; done" \
  || status=1
stop_broker
# The codes the mail server received are secrets too.
cat "$work"/mail/* 2>/dev/null | grep -oE '\b[0-9]{6}\b' | sort -u >>"$logs/hardening.secrets" || true
kill "$(cat "$work/smtp.pid")" "$(cat "$work/api.pid")" 2>/dev/null || true

echo "- 5. secrets in logs (at $(($(date +%s) - started)) s)"
cp "$work/broker.log" "$logs/hardening-broker.log"
"$py" "$repo/Tests/hardening/hardening.py" scan --logs "$logs" || status=1

echo "hardening finished in $(($(date +%s) - started)) s"
exit $status
