#!/usr/bin/env bash
# End-to-end tests of the real `gatehouse` binary: the README walk-through, restart durability, a
# kill -9 in the middle of writes, graceful shutdown, the CLI (check-config, users, migrate), and
# token verification with an independent JOSE implementation (Python's cryptography).
# E2E_DATABASE=postgres runs the same checks with every broker on PostgreSQL (a server of its own,
# one database per scenario) instead of SQLite files.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin="$repo/.build/debug/gatehouse"
work=$(mktemp -d /tmp/gatehouse-e2e.XXXXXX)
pid=""
failures=0

database=${E2E_DATABASE:-sqlite}
postgres="$repo/Tests/postgres/postgres.sh"
# Outside $work, which only root may enter: the server runs as the postgres user.
pg=$(mktemp -u /tmp/gatehouse-e2e-pg.XXXXXX)

cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  [ "$database" = postgres ] && "$postgres" remove "$pg" 2>/dev/null || true
  "$repo/Tests/saml/simplesamlphp.sh" stop "$work/saml/idp" 2>/dev/null || true
  # The server's log and the secrets this run used, for the log scan at the end of `make test`.
  mkdir -p "$repo/.build/test-logs"
  cp "$work/serve.log" "$repo/.build/test-logs/e2e-serve-$database.log" 2>/dev/null || true
  printf '%s\n' "correct horse battery staple" "a fine long password" "${introspector_secret:-}" "${loner_secret:-}" "${VAULT_SECRET:-}" \
    "${CUSTOM_SECRET:-}" "${BANK_APP_SECRET:-}" mail-password-e2e e2e-admin-token-e2e-admin-token-e2e-0001 e2e-admin-token-e2e-admin-token-e2e-0002 \
    e2e-admin-token-e2e-admin-token-e2e-0003 "${scim_token:-}" "${saml_scim_token:-}" >"$repo/.build/test-logs/e2e-$database.secrets"
  cat "$work/mail/kek" "$work/mail/kek2" >>"$repo/.build/test-logs/e2e-$database.secrets" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

pass() { echo "  ok   $1"; }
fail() { echo "  FAIL $1"; failures=$((failures + 1)); }
check() { # check "description" command...
  local description=$1; shift
  if "$@" >/dev/null 2>&1; then pass "$description"; else fail "$description"; fi
}

port=$(python3 "$repo/Tests/lib/free_port.py")
base="http://127.0.0.1:$port"
cd "$work"

# The database of the broker run from DIR ($work itself: "main").
database_name() { if [ "$1" = "$work" ]; then echo main; else basename "$1"; fi; }
use_database() { # use_database DIR: with PostgreSQL, DIR's gatehouse.yaml gets a database of its own
  [ "$database" = postgres ] || return 0
  printf 'storage:\n  postgres:\n    url: %s\n' "$("$postgres" createdb "$pg" "$(database_name "$1")")" >>"$1/gatehouse.yaml"
}
query() { # query DIR SQL: the first column of the first row, from the database of the broker run from DIR
  if [ "$database" = postgres ]; then
    "$postgres" psql "$pg" -d "$(database_name "$1")" -tA -c "$2"
  else
    "$py" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$1/data/gatehouse.sqlite" "$2"
  fi
}
if [ "$database" = postgres ]; then
  pg_port=$(python3 "$repo/Tests/lib/free_port.py")
  "$postgres" start "$pg" "$pg_port" >/dev/null
  # make run's default config, on PostgreSQL: what `gatehouse serve` and the CLI read without --config.
  "$bin" default-config | sed '/^storage:/,/^$/d' >"$work/gatehouse.yaml"
  use_database "$work"
  export GATEHOUSE_CONFIG="$work/gatehouse.yaml"
fi

start() {
  "$bin" serve --listen "127.0.0.1:$port" "$@" >>"$work/serve.log" 2>&1 &
  pid=$!
  wait_up
}

start_in() { # start_in DIR ARGS...: like start, run from DIR (its gatehouse.yaml and data/)
  local dir=$1; shift
  (cd "$dir" && exec "$bin" serve --config gatehouse.yaml "$@" >>"$work/serve.log" 2>&1) &
  pid=$!
  wait_up
}

wait_up() {
  for _ in $(seq 1 100); do
    curl -sf "$base/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || { echo "server exited:"; tail -20 "$work/serve.log"; return 1; }
    sleep 0.1
  done
  echo "server did not come up"; tail -20 "$work/serve.log"; return 1
}

stop() { # graceful: SIGTERM, must exit by itself
  kill -TERM "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; pid=""; return 0; }; sleep 0.1; done
  return 1
}

flow() { # flow APP PURPOSE USER PASSWORD -> prints the final JSON
  local started
  started=$(curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d "{\"app\":\"$1\",\"provider\":\"local\",\"purpose\":\"$2\"}")
  curl -sS -X POST "$base/v1/flows/$(echo "$started" | jq -r .flow)" -H 'Content-Type: application/json' \
    -d "{\"answer\":{\"username\":\"$3\",\"password\":\"$4\"}}"
}

echo "gatehouse end-to-end tests (work dir $work, port $port)"

# A virtual environment (kept under .build, which git ignores) for the independent checkers:
# cryptography (JOSE), jsonschema and openapi-spec-validator (the OpenAPI document), scim2-tester
# with scim2-client (SCIM conformance).
venv="$repo/.build/e2e-venv"
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import cryptography, jsonschema, openapi_spec_validator, yaml, jwt, scim2_tester, scim2_client, httpx2' 2>/dev/null \
  || "$venv/bin/python" -m pip install -q cryptography jsonschema openapi-spec-validator pyyaml pyjwt scim2-tester scim2-client httpx2
py="$venv/bin/python"

echo "- embedded default config"
check "gatehouse default-config equals config/gatehouse.yaml" diff <("$bin" default-config) "$repo/config/gatehouse.yaml"
check "gatehouse version prints the version" bash -c "'$bin' version | grep -Eq '^gatehouse [0-9]+\.[0-9]+\.[0-9]+$'"

echo "- check-config"
cat >"$work/bad.yaml" <<'YAML'
server:
  listen: nowhere
providers:
  - id: local
    type: local
    config:
      bcryptCost: 99
  - id: corp
    type: ldapp
apps:
  - id: demo
    secret: ${DEMO_SECRET}
    polcy: {}
YAML
set +e
output=$("$bin" check-config --config "$work/bad.yaml" 2>&1); status=$?
set -e
check "exit status 2 on mistakes" test "$status" -eq 2
for expected in "server.listen: not a HOST:PORT address: 'nowhere'" \
  "providers[0].config.bcryptCost: must be between 4 and 16, got 99" \
  "providers[1].type: unknown plugin type 'ldapp'" \
  "apps[0].secret: environment variable DEMO_SECRET is not set" \
  "apps[0].polcy: unknown key"; do
  check "reports: $expected" grep -qF "$expected" <<<"$output"
done
check "the default config is valid" "$bin" check-config
if [ "$database" = postgres ]; then
  # Nothing has migrated the main database yet: the cause is named, not the driver's error.
  check "check-config against a database not migrated yet says so (and exits 0)" bash -c \
    "'$bin' check-config >'$work/unmigrated.out' 2>&1 && grep -q 'not migrated yet (no Gatehouse schema): run .gatehouse migrate.' '$work/unmigrated.out' && ! grep -q PSQLError '$work/unmigrated.out'"
fi
cat >"$work/plain.yaml" <<'YAML'
providers:
  - id: bank
    type: custom-api
    config: {url: "http://bank.example/register", secret: "0123456789abcdef0123456789abcdef"}
apps:
  - id: bankapp
    policy: {identityProviders: [bank]}
YAML
check "check-config also runs the plugins' own checks (plain http:// outside development, exit 2)" bash -c \
  "! '$bin' check-config --config '$work/plain.yaml' 2>'$work/plain.out' && grep -q 'providers\[0\].config.url: must be https://' '$work/plain.out'"
mkdir -p "$work/theme"
printf '%s' '{{#title}}unclosed' >"$work/theme/layout.mustache"
printf '%s' 'x' >"$work/theme/logo.png"
printf 'environment: development\nserver:\n  themeDir: %s\n' "$work/theme" >"$work/theme.yaml"
check "a broken page theme is named file by file by check-config (exit 2)" bash -c \
  "'$bin' check-config --config '$work/theme.yaml' 2>'$work/theme.out'; [ \$? -eq 2 ] && grep -q 'server.themeDir: layout.mustache: not a valid Mustache template' '$work/theme.out' && grep -q 'server.themeDir: logo.png: not a page of the theme' '$work/theme.out'"
check "and serve does not start with it (exit 2)" bash -c "'$bin' serve --config '$work/theme.yaml' --listen 127.0.0.1:1 >/dev/null 2>&1; [ \$? -eq 2 ]"
set +e
"$bin" check-config --config "$work/missing.yaml" >"$work/missing.out" 2>&1; status=$?
set -e
check "a missing config file is named with a non-zero exit" bash -c "[ $status -ne 0 ] && grep -q 'missing.yaml' '$work/missing.out'"

echo "- the README walk-through against make run's default config"
start
sed -n '/<!-- walkthrough:start -->/,/<!-- walkthrough:end -->/p' "$repo/README.md" | sed '/^<!--/d;/^```/d' >"$work/walkthrough.sh"
if BASE="$base" bash -euo pipefail "$work/walkthrough.sh" >"$work/walkthrough.out" 2>&1; then pass "walk-through runs"; else fail "walk-through runs"; cat "$work/walkthrough.out"; fi
check "walk-through registered alice" grep -q '"username": "alice"' "$work/walkthrough.out"
check "walk-through's wrong password answered invalid_credentials" grep -q '"error": "invalid_credentials"' "$work/walkthrough.out"

echo "- token verified with the JWKS by an independent implementation"
token=$(flow demo authenticate alice "correct horse battery staple" | jq -r .tokens.access_token)
curl -sS "$base/oauth2/jwks" >"$work/jwks.json"
check "ES256 signature, iss, aud and exp verify in Python" "$py" - "$token" "$work/jwks.json" "$base" <<'PY'
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
token, jwks_path, issuer = sys.argv[1], sys.argv[2], sys.argv[3]
b64 = lambda s: base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
head, body, sig = token.split(".")
header, claims = json.loads(b64(head)), json.loads(b64(body))
key = next(k for k in json.load(open(jwks_path))["keys"] if k["kid"] == header["kid"])
assert header["alg"] == "ES256" and key["alg"] == "ES256" and header["typ"] == "at+jwt"
public = ec.EllipticCurvePublicNumbers(int.from_bytes(b64(key["x"]), "big"), int.from_bytes(b64(key["y"]), "big"), ec.SECP256R1()).public_key()
raw = b64(sig)
public.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")), f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
assert claims["iss"] == issuer and claims["aud"] == "demo" and claims["exp"] > time.time() and claims["stateless"] is False
PY

echo "- answers match docs/openapi.yaml"
mkdir -p "$work/answers"
curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"demo","provider":"local"}' >"$work/answers/startFlow.201.json"
curl -sS -X POST "$base/v1/flows/$(jq -r .flow "$work/answers/startFlow.201.json")" -H 'Content-Type: application/json' \
  -d '{"answer":{"username":"alice","password":"correct horse battery staple"}}' >"$work/answers/answerFlow.200.json"
curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"nope","provider":"local"}' >"$work/answers/startFlow.401.json"
curl -sS -X POST "$base/v1/flows/unknown" -H 'Content-Type: application/json' -d '{"answer":{}}' >"$work/answers/answerFlow.404.json"
cp "$work/jwks.json" "$work/answers/jwks.200.json"
curl -sS "$base/healthz" >"$work/answers/healthz.200.json"
curl -sS "$base/readyz" >"$work/answers/readyz.200.json"
curl -sS "$base/.well-known/openid-configuration" >"$work/answers/discovery.200.json"
cat >"$work/validate_answers.py" <<'PY'
import json, os, sys, yaml, jsonschema
from openapi_spec_validator import validate
spec = yaml.safe_load(open(sys.argv[1]))
validate(spec)
operations = {op["operationId"]: op for path in spec["paths"].values() for key, op in path.items() if key != "parameters"}
for name in sorted(os.listdir(sys.argv[2])):
    operation, status, _ = name.split(".")
    response = operations[operation]["responses"][status]
    if "$ref" in response:
        response = spec["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    schema = next(iter(response["content"].values()))["schema"]
    document = {**schema, "components": spec["components"]}
    jsonschema.Draft202012Validator(document).validate(json.load(open(os.path.join(sys.argv[2], name))))
PY
check "openapi.yaml is a valid OpenAPI 3.1 document and every answer matches its schema" "$py" "$work/validate_answers.py" "$repo/docs/openapi.yaml" "$work/answers"

echo "- restart keeps users, accounts and keys"
kid_before=$(jq -r '.keys[0].kid' "$work/jwks.json")
check "SIGTERM shuts the server down gracefully" stop
start
check "alice signs in after the restart" bash -c "[ \"\$(jq -r .status <<<'$(flow demo authenticate alice "correct horse battery staple")')\" = completed ]"
check "the signing key is the same after the restart" test "$(curl -sS "$base/oauth2/jwks" | jq -r '.keys[0].kid')" = "$kid_before"

echo "- kill -9 during concurrent registrations leaves a consistent database"
for i in $(seq 1 20); do flow demo register "crash$i" "correct horse battery staple" >/dev/null 2>&1 & done
sleep 0.4
kill -9 "$pid"; wait "$pid" 2>/dev/null || true; pid=""
wait 2>/dev/null || true
if [ "$database" = sqlite ]; then check "SQLite's integrity_check is ok" test "$(query "$work" "PRAGMA integrity_check")" = ok; fi
check "every account has its identity link and every link its account" test \
  "$(query "$work" "SELECT (SELECT COUNT(*) FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM identity_links l WHERE l.account_id = a.id)) + (SELECT COUNT(*) FROM identity_links l WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = l.account_id))")" = 0
start
check "the broker serves again after the crash" bash -c "[ \"\$(jq -r .status <<<'$(flow demo authenticate alice "correct horse battery staple")')\" = completed ]"
stop

echo "- users command"
check "users add reads the password from stdin" bash -c "printf '%s\n' 'a fine long password' | '$bin' users add bob"
check "users list shows bob" bash -c "'$bin' users list | grep -q '^bob'"
set +e
printf '%s\n' 'a fine long password' | "$bin" users add bob >"$work/dup.out" 2>&1; status=$?
set -e
check "adding bob twice is refused with username_taken" bash -c "[ $status -ne 0 ] && grep -q username_taken '$work/dup.out'"
# A confidential app to introspect with (the demo app is public).
introspector_secret=$("$bin" apps create introspector --provider local | sed -n 's/^client secret (shown once, store it now): //p')
loner_secret=$("$bin" apps create loner --provider local | sed -n 's/^client secret (shown once, store it now): //p')
check "apps set-policy --introspect-tokens-of lets a resource server introspect another app's tokens" "$bin" apps set-policy introspector --introspect-tokens-of demo
introspect_bob() { curl -sS -u "introspector:$introspector_secret" "$base/oauth2/introspect" --data-urlencode "token=$bob_token" | jq -r .active; }
start
bob_signin=$(flow demo authenticate bob "a fine long password")
check "bob signs in through the API" test "$(jq -r .status <<<"$bob_signin")" = completed
bob_token=$(jq -r .tokens.access_token <<<"$bob_signin")
check "bob's access token introspects as active" test "$(introspect_bob)" = true
check "an app not granted introspection learns nothing of another app's token (active: false)" test "$(curl -sS -u "loner:$loner_secret" "$base/oauth2/introspect" --data-urlencode "token=$bob_token" | jq -c .)" = '{"active":false}'
check "gatehouse apps disable (other process) turns an app away from the running broker within its second" bash -c \
  "'$bin' apps disable loner >/dev/null && sleep 1.2 && [ \$(curl -s -o /dev/null -w '%{http_code}' -u 'loner:$loner_secret' '$base/oauth2/introspect' --data-urlencode token=x) = 401 ]"
check "gatehouse apps enable lets it back in" bash -c \
  "'$bin' apps enable loner >/dev/null && sleep 1.2 && [ \$(curl -s -o /dev/null -w '%{http_code}' -u 'loner:$loner_secret' '$base/oauth2/introspect' --data-urlencode token=x) = 200 ]"
check "the audit log names both changes" bash -c "'$bin' audit tail --app loner | grep -q app.disabled && '$bin' audit tail --app loner | grep -q app.enabled"
stop
check "users remove removes bob" "$bin" users remove bob
start
check "bob can no longer sign in" bash -c "[ \"\$(jq -r .error <<<'$(flow demo authenticate bob "a fine long password")')\" = invalid_credentials ]"
check "bob's earlier access token is revoked with his account (introspection: inactive)" test "$(introspect_bob)" = false
stop
echo "- admin: policy changes at run time, from the CLI and the admin API, without a restart"
export GATEHOUSE_ADMIN_TOKEN=e2e-admin-token-e2e-admin-token-e2e-0001
start
stateless_start() {
  curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"demo","provider":"local","stateless":true}' | jq -r .error
}
admin() { curl -sS -H "Authorization: Bearer $GATEHOUSE_ADMIN_TOKEN" -H 'Content-Type: application/json' "$@"; }
check "an admin call without credentials gets 401" test "$(curl -s -o /dev/null -w '%{http_code}' "$base/admin/v1/apps")" = 401
check "stateless is refused while the policy says off" test "$(stateless_start)" = stateless_disabled
register_start() {
  curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"demo","provider":"local","purpose":"register"}' | jq -r '.error // "started"'
}
set +e
"$bin" apps set-policy demo --stateless on >"$work/stateless-on.out" 2>&1; status=$?
set -e
check "the CLI refuses stateless on for an app whose providers cannot sign in statelessly, with the reason" bash -c \
  "[ $status -ne 0 ] && grep -q \"policy.statelessAuthentication: cannot be on: none of this app's identity providers can sign in statelessly\" '$work/stateless-on.out'"
check "registration is open while the policy allows it" test "$(register_start)" = started
check "gatehouse apps set-policy demo --self-registration off (CLI, other process)" "$bin" apps set-policy demo --self-registration off
check "the running broker applies it at once (registration_disabled)" test "$(register_start)" = registration_disabled
check "the admin API sets the policy too" test "$(admin -X PATCH "$base/admin/v1/apps/demo/policy" -d '{"statelessAuthentication": false, "selfRegistration": false}' | jq -r .policy.selfRegistration)" = false
check "and the broker still refuses stateless" test "$(stateless_start)" = stateless_disabled
set +e
"$bin" apps set-policy demo --access-token-lifetime=-5 >"$work/invalid.out" 2>&1; status=$?
set -e
check "an invalid policy change is refused with the exact field" bash -c "[ $status -ne 0 ] && grep -q 'policy.accessTokenLifetime: must be between 60 and 86400 seconds, got -5' '$work/invalid.out'"
check "the admin API names the field too" test "$(admin -X PATCH "$base/admin/v1/apps/demo/policy" -d '{"flowLifetime": "soon"}' | jq -r .field)" = policy.flowLifetime
check "gatehouse audit tail shows both toggles with the admin's name" bash -c "'$bin' audit tail --type policy.updated --app demo | grep -c 'admin=' | grep -qx 2 && '$bin' audit tail --type policy.updated | grep -q 'admin=env-admin'"
check "the audit entry reads as the one switch that moved (changes: selfRegistration: on → off)" bash -c \
  "curl -sS -H 'Authorization: Bearer $GATEHOUSE_ADMIN_TOKEN' '$base/admin/v1/audit?type=policy.&app=demo' | jq -e '[.[].changes[].summary] | index(\"selfRegistration: on → off\") != null and (map(select(startswith(\"redirectURIs\"))) | length == 0)' >/dev/null"
mkdir -p "$work/admin-answers"
admin -X POST "$base/admin/v1/users" -d '{"username": "quinn"}' >"$work/admin-answers/adminCreateUser.201.json"
quinn_id=$(jq -r .user.id "$work/admin-answers/adminCreateUser.201.json")
quinn_temporary=$(jq -r .password "$work/admin-answers/adminCreateUser.201.json")
quinn_listed=$(admin "$base/admin/v1/users?q=quinn" | jq -r '.[0].id')
check "POST /admin/v1/users makes quinn's account at once, with a generated password shown once" test "$quinn_listed" = "$quinn_id" -a "${#quinn_temporary}" -ge 20
quinn_first=$(flow demo authenticate quinn "$quinn_temporary")
check "quinn's temporary password only asks for a new one (change_password, no tokens)" jq -e '.status == "challenge" and .challenge.type == "change_password" and (.tokens == null)' <<<"$quinn_first"
quinn_done=$(curl -sS -X POST "$base/v1/flows/$(jq -r .flow <<<"$quinn_first")" -H 'Content-Type: application/json' -d '{"answer":{"password":"violet chose this one"}}')
check "the new password completes the sign-in into the account the admin made" jq -e --arg id "$quinn_id" '.status == "completed" and .account.id == $id' <<<"$quinn_done"
admin -X POST "$base/admin/v1/users/$quinn_id/password" -d '{"password": "reset by the admin 8", "mustChange": false}' >"$work/admin-answers/adminResetPassword.200.json"
quinn_old=$(flow demo authenticate quinn 'violet chose this one' | jq -r .error)
quinn_new=$(flow demo authenticate quinn 'reset by the admin 8' | jq -r .status)
check "after an admin's reset the old password is refused and the new one signs in" test "$quinn_old/$quinn_new" = invalid_credentials/completed
check "a password the policy refuses is refused at creation with its code" test \
  "$(admin -X POST "$base/admin/v1/users" -d '{"username": "rita", "password": "short"}' | jq -r .error)" = password_too_short
check "an unknown key in the body is named" test "$(admin -X POST "$base/admin/v1/users" -d '{"username": "rita", "pasword": "x"}' | jq -r .field)" = pasword
admin "$base/admin/v1/apps" >"$work/admin-answers/adminListApps.200.json"
admin "$base/admin/v1/apps/demo" >"$work/admin-answers/adminShowApp.200.json"
admin "$base/admin/v1/providers" >"$work/admin-answers/adminProviders.200.json"
admin "$base/admin/v1/users" >"$work/admin-answers/adminListUsers.200.json"
admin "$base/admin/v1/audit?limit=5" >"$work/admin-answers/adminAudit.200.json"
admin -X PATCH "$base/admin/v1/apps/demo/policy" -d '{"flowLifetime": "soon"}' >"$work/admin-answers/adminPatchPolicy.400.json"
curl -sS "$base/admin/v1/apps" >"$work/admin-answers/adminListApps.401.json"
check "admin answers match docs/openapi.yaml" "$py" "$work/validate_answers.py" "$repo/docs/openapi.yaml" "$work/admin-answers"
check "/metrics exposes request counts" bash -c "curl -sS '$base/metrics' | grep -q 'gatehouse_http_requests_total{method=\"POST\",route=\"/v1/flows\",status=\"403\"}'"
stop
check "check-config reports the drift between file and database" bash -c "'$bin' check-config | grep -q 'demo: is managed by an admin.*policy.selfRegistration: file true, database false'"
start
check "after a restart the admin's change still holds (registration stays off)" test "$(curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"demo","provider":"local","purpose":"register"}' | jq -r .error)" = registration_disabled
stop
unset GATEHOUSE_ADMIN_TOKEN

echo "- FSSO: JWTs signed with an openssl key by PyJWT, exchanged with the JWT bearer grant"
openssl genrsa -out "$work/fsso.key" 2048 2>/dev/null
openssl rsa -in "$work/fsso.key" -RSAPublicKey_out -out "$work/fsso.pkcs1.pem" 2>/dev/null
mkdir -p "$work/fsso"
cat >"$work/fsso/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
providers:
  - id: acme-sso
    type: fsso-jwt
    config:
      issuers:
        - issuer: acme
          apps: [backend]
          allowedClaims: [email]
          keys:
            - kid: k1
              pem: |
$(sed 's/^/                /' "$work/fsso.pkcs1.pem")
apps:
  - id: backend
    policy:
      identityProviders: [acme-sso]
  - id: partner
    policy:
      identityProviders: [acme-sso]
YAML
use_database "$work/fsso"
start_in "$work/fsso"
sign() { "$py" - "$work/fsso.key" "$@" <<'PY'
import base64, hashlib, hmac, json, sys, time, uuid, jwt
key = open(sys.argv[1]).read()
mode = sys.argv[2] if len(sys.argv) > 2 else "good"
now = int(time.time())
claims = {"iss": "acme", "sub": "carol", "aud": "identity-service", "jti": str(uuid.uuid4()), "iat": now, "exp": now + 60, "email": "carol@acme.example"}
if mode == "hs256":
    # The classic confusion attack: HMAC keyed with the public key's bytes.
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    public = open(sys.argv[1].replace(".key", ".pkcs1.pem"), "rb").read()
    signing_input = b64(json.dumps({"alg": "HS256", "kid": "k1"}).encode()) + "." + b64(json.dumps(claims).encode())
    print(signing_input + "." + b64(hmac.new(public, signing_input.encode(), hashlib.sha256).digest()))
else:
    if mode == "expired":
        claims["iat"], claims["exp"] = now - 300, now - 200
    print(jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"}))
PY
}
bearer() { curl -sS "$base/oauth2/token" --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" -d client_id=backend --data-urlencode "assertion=$1"; }
assertion=$(sign good)
check "a PyJWT RS256 assertion (openssl key, PKCS#1 PEM) is exchanged for tokens" test "$(bearer "$assertion" | jq -r .token_type)" = Bearer
check "the same assertion again is refused (replay)" test "$(bearer "$assertion" | jq -r .error)" = invalid_grant
check "HS256 keyed with the public key is refused" test "$(bearer "$(sign hs256)" | jq -r .error)" = invalid_grant
check "an expired assertion is refused" test "$(bearer "$(sign expired)" | jq -r .error)" = invalid_grant
check "an issuer signs people into the apps it names only (partner shares the instance)" test "$(curl -sS "$base/oauth2/token" --data-urlencode "grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer" -d client_id=partner --data-urlencode "assertion=$(sign good)" | jq -r .error)" = invalid_grant
check "the refusal's reason is issuer_not_allowed in the audit log" bash -c "cd '$work/fsso' && '$bin' audit tail --type signin.failure --config gatehouse.yaml | grep -q 'reason=issuer_not_allowed'"
stop
start_in "$work/fsso"
check "the replay is still refused after a restart" test "$(bearer "$assertion" | jq -r .error)" = invalid_grant
openssl rsa -in "$work/fsso.key" -pubout -out "$work/fsso.spki.pem" 2>/dev/null
openssl genrsa -out "$work/beta.key" 2048 2>/dev/null
openssl rsa -in "$work/beta.key" -pubout -out "$work/beta.pem" 2>/dev/null
check "gatehouse resources add registers an SPKI issuer key for a new issuer" bash -c "cd '$work/fsso' && '$bin' resources add --config gatehouse.yaml keys issuer=beta kid=b1 apps=backend pem=@'$work/beta.pem'"
check "gatehouse resources show lists config and registered keys" bash -c "cd '$work/fsso' && '$bin' resources show --config gatehouse.yaml keys | grep -q '^beta	b1	registered' && '$bin' resources show --config gatehouse.yaml keys | grep -q '^acme	k1	config'"
check "gatehouse resources add --app makes a test key and prints its private key once" bash -c "cd '$work/fsso' && '$bin' resources add --config gatehouse.yaml --app backend test-keys >'$work/test.key' 2>'$work/test.info' && grep -q 'PRIVATE KEY-----' '$work/test.key'"
test_kid=$(grep -o 'kid=[^ ]*' "$work/test.info" | head -1 | cut -d= -f2)
sign_with() { "$py" - "$@" <<'PY'
import sys, time, uuid, jwt
key, iss, kid, sub = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
now = int(time.time())
print(jwt.encode({"iss": iss, "sub": sub, "aud": "identity-service", "jti": uuid.uuid4().hex, "iat": now, "exp": now + 60}, key, algorithm="RS256", headers={"kid": kid}))
PY
}
check "the running broker accepts the issuer key the CLI registered, without a restart" test "$(bearer "$(sign_with "$work/beta.key" beta b1 dave)" | jq -r .token_type)" = Bearer
check "a test-key token registers a user" test "$(bearer "$(sign_with "$work/test.key" gatehouse-test:backend "$test_kid" tester)" | jq -r .token_type)" = Bearer
check "the test user is marked as a test account" test "$(query "$work/fsso" "SELECT COUNT(*) FROM accounts WHERE username = 'tester' AND CAST(is_test AS INTEGER) = 1")" = 1
check "gatehouse resources remove --app revokes the test key" bash -c "cd '$work/fsso' && '$bin' resources remove --config gatehouse.yaml --app backend test-keys '$test_kid'"
check "the audit log names the plugin's events by its type" bash -c "cd '$work/fsso' && '$bin' audit tail --type fsso-jwt.test_key_revoked --config gatehouse.yaml | grep -q '$test_kid'"
check "the running broker refuses the revoked test key's token at once" test "$(bearer "$(sign_with "$work/test.key" gatehouse-test:backend "$test_kid" tester2)" | jq -r .error)" = invalid_grant
stop
check "the audit log names each refusal's reason" bash -c "cd '$work/fsso' && '$bin' audit tail --type signin.failure --config gatehouse.yaml | grep -q 'reason=token_replayed' && '$bin' audit tail --type signin.failure --config gatehouse.yaml | grep -q 'reason=alg_not_allowed' && '$bin' audit tail --type signin.failure --config gatehouse.yaml | grep -q 'reason=token_expired'"

echo "- custom-api: the app's API (Python stand-in), stateless sign-in toggled by the admin API without a restart"
mkdir -p "$work/custom"
python3 "$repo/Tests/custom-api/app_api.py" --secret "custom-api-secret-0123456789-abcdefgh" --port-file "$work/custom/port" --log "$work/custom/calls.jsonl" >"$work/custom/api.log" 2>&1 &
api_pid=$!
for _ in $(seq 1 100); do [ -s "$work/custom/port" ] && break; sleep 0.05; done
export CUSTOM_SECRET=custom-api-secret-0123456789-abcdefgh BANK_APP_SECRET=bank-app-secret-0123456789-abcdefghijkl GATEHOUSE_ADMIN_TOKEN=e2e-admin-token-e2e-admin-token-e2e-0002
cat >"$work/custom/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
providers:
  - id: bank
    type: custom-api
    config:
      url: http://127.0.0.1:$(cat "$work/custom/port")/register
      authentication: hmac
      secret: \${CUSTOM_SECRET}
apps:
  - id: bankapp
    secret: \${BANK_APP_SECRET}
    policy:
      identityProviders: [bank]
YAML
use_database "$work/custom"
start_in "$work/custom"
custom_flow() { # custom_flow STATELESS SUBJECT -> the final JSON
  local started
  started=$(curl -sS -u "bankapp:$BANK_APP_SECRET" -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d "{\"app\":\"bankapp\",\"provider\":\"bank\",\"stateless\":$1}")
  [ "$(jq -r .status <<<"$started")" = challenge ] || { echo "$started"; return; }
  curl -sS -u "bankapp:$BANK_APP_SECRET" -X POST "$base/v1/flows/$(jq -r .flow <<<"$started")" -H 'Content-Type: application/json' \
    -d "{\"answer\":{\"customData\":{\"subject\":\"$2\"}}}"
}
rows() { for table in accounts identity_links refresh_tokens flows; do query "$work/custom" "SELECT COUNT(*) FROM $table"; done | xargs; }
check "a stateful custom-api sign-in creates an account and a refresh token" test "$(custom_flow false cust-1 | jq -r '.account.username + " " + (.tokens.refresh_token != null | tostring)')" = "cust-1 true"
check "stateless is refused while the app's policy has it off" test "$(custom_flow true ghost | jq -r .error)" = stateless_disabled
check "the admin API turns statelessAuthentication on" test "$(admin -X PATCH "$base/admin/v1/apps/bankapp/policy" -d '{"statelessAuthentication": true}' | jq -r .policy.statelessAuthentication)" = true
before=$(rows)
stateless=$(custom_flow true ghost)
check "the running broker signs in statelessly at once: no account, no refresh token" bash -c "jq -e '.status == \"completed\" and .account == null and .tokens.refresh_token == null' <<<'$stateless'"
check "a stateless sign-in writes no account, identity link, refresh token or flow row" test "$(rows)" = "$before"
check "introspection reports the stateless token active, with its stateless marker" bash -c "curl -sS -u 'bankapp:$BANK_APP_SECRET' '$base/oauth2/introspect' --data-urlencode 'token=$(jq -r .tokens.access_token <<<"$stateless")' | jq -e '.active and .stateless and .sub == \"bank|ghost\"'"
check "the app's API received HMAC-signed calls only" bash -c "'$py' -c \"import json,sys; calls=[json.loads(l) for l in open('$work/custom/calls.jsonl')]; sys.exit(0 if calls and all(c['problem'] is None and c['headers'].get('X-Gatehouse-Signature','').startswith('v1=') for c in calls) else 1)\""
stateless_off_refuses() {
  [ "$(admin -X PATCH "$base/admin/v1/apps/bankapp/policy" -d '{"statelessAuthentication": false}' | jq -r .policy.statelessAuthentication)" = false ] \
    && [ "$(custom_flow true ghost2 | jq -r .error)" = stateless_disabled ]
}
check "the admin API turns it off again and stateless is refused" stateless_off_refuses
stop
kill "$api_pid" 2>/dev/null || true
unset GATEHOUSE_ADMIN_TOKEN

echo "- email-code: passwordless, a second factor after local, provisional identities, through a real SMTP server (aiosmtpd, STARTTLS + AUTH)"
"$repo/scripts/test-venv.sh"
mkdir -p "$work/mail"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/mail/key.pem" -out "$work/mail/cert.pem" -days 2 \
  -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
"$repo/.build/test-venv/bin/python" "$repo/Tests/email/smtp_server.py" --maildir "$work/mail/box" --port-file "$work/mail/port" --security starttls \
  --cert "$work/mail/cert.pem" --key "$work/mail/key.pem" --username mailer --password mail-password-e2e >"$work/mail/smtp.log" 2>&1 &
smtp_pid=$!
for _ in $(seq 1 100); do [ -s "$work/mail/port" ] && break; sleep 0.05; done
export SMTP_PASSWORD=mail-password-e2e VAULT_SECRET=vault-app-secret-0123456789-abcdefghijkl GATEHOUSE_ADMIN_TOKEN=e2e-admin-token-e2e-admin-token-e2e-0003
echo "- keys at rest: a production broker needs a key-encryption key, from an owner-only file"
printf 'environment: production\nproviders: []\napps: []\n' >"$work/nokek.yaml"
check "production without keys.encryptionKey is refused by check-config (exit 2, names the key)" bash -c \
  "! '$bin' check-config --config '$work/nokek.yaml' 2>'$work/nokek.out' && grep -q 'keys.encryptionKey: is required outside development' '$work/nokek.out'"
"$bin" keys generate-kek >"$work/mail/kek"
chmod 644 "$work/mail/kek"
printf 'environment: production\nkeys: {encryptionKeyFile: %s}\nproviders: []\napps: []\n' "$work/mail/kek" >"$work/sharedkek.yaml"
check "a key file its group or others may read is refused (chmod 600 it)" bash -c \
  "! '$bin' check-config --config '$work/sharedkek.yaml' 2>'$work/sharedkek.out' && grep -q 'chmod 600' '$work/sharedkek.out'"
chmod 600 "$work/mail/kek"
cat >"$work/mail/gatehouse.yaml" <<YAML
environment: production
server:
  listen: 127.0.0.1:$port
keys:
  encryptionKeyFile: $work/mail/kek
mail:
  transport: smtp
  from: Gatehouse <noreply@gatehouse.test>
  smtp:
    host: 127.0.0.1
    port: $(cat "$work/mail/port")
    security: starttls
    username: mailer
    password: \${SMTP_PASSWORD}
    rootCA: $work/mail/cert.pem
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
  - id: email
    type: email-code
apps:
  - id: notes
    name: Notes
    policy: {identityProviders: [email], selfRegistration: true}
  - id: vault
    secret: \${VAULT_SECRET}
    policy: {identityProviders: [local], authenticators: [email], secondFactor: email, selfRegistration: true}
YAML
use_database "$work/mail"
start_in "$work/mail"
mailcode() { # mailcode ADDRESS -> the code in the newest message to ADDRESS, parsed with Python's email package
  "$py" - "$work/mail/box" "$1" <<'PY'
import email, email.policy, os, re, sys
box, to = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(box), reverse=True):
    message = email.message_from_binary_file(open(os.path.join(box, name), "rb"), policy=email.policy.default)
    if message["X-Envelope-To"] == to:
        print(re.search(r"\b\d{6}\b", message.get_body(("plain",)).get_content()).group(0)); break
PY
}
answer() { # answer FLOW JSON [CURL ARGS...]
  local flow=$1 body=$2; shift 2
  curl -sS -X POST "$base/v1/flows/$flow" -H 'Content-Type: application/json' -d "{\"answer\":$body}" "$@"
}
passwordless() { # passwordless ADDRESS -> the final JSON
  local flow
  flow=$(curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"notes","provider":"email"}' | jq -r .flow)
  answer "$flow" "{\"email\":\"$1\"}" >"$work/mail/challenge.json"
  answer "$flow" "{\"code\":\"$(mailcode "$1")\"}"
}
pat=$(passwordless pat@example.com)
check "passwordless: the emailed code signs pat in (account named by the address)" test "$(jq -r .account.username <<<"$pat")" = pat@example.com
check "the code challenge names the masked address" test "$(jq -r '.challenge.type + " " + .challenge.sentTo' "$work/mail/challenge.json")" = "email_code p•••t@example.com"
flow=$(curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"notes","provider":"email"}' | jq -r .flow)
answer "$flow" '{"email":"pat@example.com"}' >/dev/null
wrong=$(mailcode pat@example.com | tr 0-9 1-90)
check "a wrong code is refused with invalid_code (HTTP 400)" test "$(answer "$flow" "{\"code\":\"$wrong\"}" -o /dev/null -w '%{http_code}')" = 400
check "resending at once is rate limited with Retry-After" bash -c "curl -sS -D - -o /dev/null -X POST '$base/v1/flows/$flow' -H 'Content-Type: application/json' -d '{\"answer\":{\"resend\":true}}' | grep -qi '^retry-after:'"

vault_flow() { curl -sS -u "vault:$VAULT_SECRET" -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d "{\"app\":\"vault\",\"provider\":\"local\",\"purpose\":\"$1\"}" | jq -r .flow; }
flow=$(vault_flow register)
check "second factor: after the local password, an account without an address is asked for one" \
  test "$(answer "$flow" '{"username":"vic","password":"correct horse battery staple"}' -u "vault:$VAULT_SECRET" | jq -r .challenge.type)" = email_address
answer "$flow" '{"email":"vic@example.com"}' -u "vault:$VAULT_SECRET" >/dev/null
answer "$flow" "{\"code\":\"$(mailcode vic@example.com)\"}" -u "vault:$VAULT_SECRET" >/dev/null
flow=$(vault_flow authenticate)
check "the next sign-in sends the code to the enrolled address at once" \
  test "$(answer "$flow" '{"username":"vic","password":"correct horse battery staple"}' -u "vault:$VAULT_SECRET" | jq -r .challenge.type)" = email_code
vic=$(answer "$flow" "{\"code\":\"$(mailcode vic@example.com)\"}" -u "vault:$VAULT_SECRET")
check "the access token's amr names the password and the emailed code" bash -c \
  "'$py' -c \"import jwt,sys; sys.exit(0 if jwt.decode(sys.argv[1], options={'verify_signature': False})['amr'] == ['pwd','local','otp','email'] else 1)\" '$(jq -r .tokens.access_token <<<"$vic")'"

created=$(curl -sS -u "vault:$VAULT_SECRET" -X POST "$base/v1/provisional-identities" -H 'Content-Type: application/json' \
  -d '{"email":"invitee@example.com","grants":["doc:7:read"],"groups":["editors"]}')
pid_=$(jq -r .id <<<"$created")
check "the app's back end creates a provisional identity (pending, public id pi_...)" bash -c "jq -e '.status == \"pending\" and (.id | startswith(\"pi_\"))' <<<'$created'"
check "a public app cannot create one" test "$(curl -sS -u "notes:" -X POST "$base/v1/provisional-identities" -H 'Content-Type: application/json' -d '{"email":"x@example.com"}' | jq -r .error)" != null
token=$(jq -r .tokens.access_token <<<"$vic")
attach() { curl -sS -X POST "$base/v1/account/provisional-identities" -H "Authorization: Bearer $1" -H 'Content-Type: application/json' -d "{\"id\":\"$pid_\"}"; }
check "attaching an unverified address answers identity_verification_needed with the address" \
  test "$(attach "$token" | jq -r '.status + " " + .email')" = "identity_verification_needed invitee@example.com"
verified=$(curl -sS -X POST "$base/v1/account/provisional-identities/$pid_/verify" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "{\"code\":\"$(mailcode invitee@example.com)\"}")
check "the emailed code attaches it" test "$(jq -r .status <<<"$verified")" = ready
check "its grants and groups are the account's" bash -c "curl -sS '$base/v1/account/provisional-identities' -H 'Authorization: Bearer $token' | jq -e '.[0].grants == [\"doc:7:read\"] and .[0].groups == [\"editors\"]'"
flow=$(vault_flow register)
answer "$flow" '{"username":"wes","password":"correct horse battery staple"}' -u "vault:$VAULT_SECRET" >/dev/null
answer "$flow" '{"email":"wes@example.com"}' -u "vault:$VAULT_SECRET" >/dev/null
other=$(answer "$flow" "{\"code\":\"$(mailcode wes@example.com)\"}" -u "vault:$VAULT_SECRET" | jq -r .tokens.access_token)
check "another account cannot attach it (provisional_identity_already_attached, 409)" test "$(attach "$other" | jq -r .error)" = provisional_identity_already_attached
check "the same account cannot attach it twice" test "$(attach "$token" | jq -r .error)" = provisional_identity_already_attached

kill "$smtp_pid" 2>/dev/null; wait "$smtp_pid" 2>/dev/null || true
flow=$(curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"notes","provider":"email"}' | jq -r .flow)
check "with the SMTP server down, the answer is delivery_failed (503)" test "$(answer "$flow" '{"email":"late@example.com"}' -o /dev/null -w '%{http_code}')" = 503
check "no code and no SMTP password appear in the server log" bash -c "! grep -q 'mail-password-e2e' '$work/serve.log' && ! grep -qE 'code[^a-z]*[0-9]{6}' '$work/serve.log'"
stop
sealed_at_rest() { # every signing key and the email-code HMAC key are sealed; no PEM private key in the files
  if [ "$database" = postgres ]; then
    [ "$(query "$work/mail" "SELECT COUNT(*) FROM signing_keys WHERE private_key_pem NOT LIKE 'gh-kek1:%'")" = 0 ] \
      && [ "$(query "$work/mail" "SELECT COUNT(*) FROM signing_keys")" -gt 0 ] \
      && [ "$(query "$work/mail" "SELECT COUNT(*) FROM plugin_data WHERE key = 'hash-key' AND substring(value FROM 1 FOR 8) = 'gh-kek1:'::bytea")" = 1 ]
    return
  fi
  "$py" - "$work/mail/data/gatehouse.sqlite" <<'PY'
import glob, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
keys = [row[0] for row in db.execute("SELECT private_key_pem FROM signing_keys")]
hmac = [bytes(row[0]) for row in db.execute("SELECT value FROM plugin_data WHERE key = 'hash-key'")]
files = b"".join(open(name, "rb").read() for name in glob.glob(sys.argv[1] + "*"))
ok = keys and all(k.startswith("gh-kek1:") for k in keys) and hmac and all(h.startswith(b"gh-kek1:") for h in hmac) and b"PRIVATE KEY" not in files
sys.exit(0 if ok else 1)
PY
}
check "signing keys and the email-code HMAC key are stored encrypted (gh-kek1:); no private key anywhere in the database files" sealed_at_rest
"$bin" keys generate-kek >"$work/mail/kek2"
chmod 600 "$work/mail/kek2"
sed "s|encryptionKeyFile: $work/mail/kek\$|encryptionKeyFile: $work/mail/kek2\n  previousEncryptionKeyFiles: [$work/mail/kek]|" "$work/mail/gatehouse.yaml" >"$work/mail/both.yaml"
check "gatehouse keys rewrap re-encrypts every secret under the new key (old key still readable)" bash -c \
  "cd '$work/mail' && '$bin' keys rewrap --config both.yaml | grep -q 'signing key(s), 1 plugin secret(s)'"
sed "s|encryptionKeyFile: $work/mail/kek\$|encryptionKeyFile: $work/mail/kek2|" "$work/mail/gatehouse.yaml" >"$work/mail/new.yaml"
cp "$work/mail/new.yaml" "$work/mail/gatehouse.yaml"
start_in "$work/mail"
check "with only the new key the broker starts and vic's earlier token still verifies" test \
  "$(curl -sS -u "vault:$VAULT_SECRET" "$base/oauth2/introspect" --data-urlencode "token=$token" | jq -r .active)" = true
stop
unset GATEHOUSE_ADMIN_TOKEN

echo "- devices: an independent Python device client (cryptography, PyJWT) registers keys, signs assertions and DPoP proofs"
mkdir -p "$work/devices"
cat >"$work/devices/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
providers:
  - id: device
    type: device-key
apps:
  - id: phone
    policy: {identityProviders: [device], selfRegistration: true, defaultScopes: [openid], allowedScopes: [openid, offline_access]}
  - id: strict
    policy: {identityProviders: [device], selfRegistration: true, dpop: required, dpopNonce: true}
YAML
use_database "$work/devices"
start_in "$work/devices"
if "$py" "$repo/Tests/e2e/device_client.py" "$base" >"$work/devices/client.out" 2>&1; then pass "the device client's checks (below)"; else fail "the device client's checks (below)"; fi
grep -E '^  (ok|FAIL) ' "$work/devices/client.out" | sed 's/^/  /'
grep -q '"failures": 0' "$work/devices/client.out" || tail -5 "$work/devices/client.out"
device_account=$(tail -1 "$work/devices/client.out" | jq -r .account 2>/dev/null || true)
stop
check "gatehouse devices list shows the account's two remaining devices (the reinstalled phone, the one added with the DPoP token)" bash -c \
  "cd '$work/devices' && '$bin' devices list --config gatehouse.yaml '$device_account' | grep -c '^dev_' | grep -qx 2"
check "gatehouse devices remove with an unknown device says so (exit 1)" bash -c \
  "cd '$work/devices' && '$bin' devices remove --config gatehouse.yaml '$device_account' dev_nothing 2>&1 | grep -q 'no such device'"

echo "- device attestation: Play Integrity tokens made as Google makes them, a DeviceCheck stand-in checking the broker's JWT, test keys"
mkdir -p "$work/attest"
dc_port=$((port + 7))
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/attest/devicecheck.p8"
openssl pkey -in "$work/attest/devicecheck.p8" -pubout -out "$work/attest/devicecheck.pub"
echo '{"entries": {}}' >"$work/attest/status.json"
cat >"$work/attest/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
admin:
  tokens: [{name: ada-admin, token: attest-admin-token-0123456789-abcdefghij}]
providers:
  - id: device
    type: device-key
  - id: attest
    type: device-attestation
    config:
      revocationList: {url: "", file: $work/attest/status.json}
      services: {deviceCheckProduction: "http://127.0.0.1:$dc_port/v1"}
      apps:
        phone:
          testKeys: true
          apple:
            appIDs: [ABCDE12345.com.example.phone]
            deviceCheck: {teamID: ABCDE12345, keyID: KEY1234567}
          android:
            packageNames: [com.example.phone]
            playIntegrity: {deviceIntegrity: device}
apps:
  - id: phone
    policy: {identityProviders: [device], authenticators: [attest], selfRegistration: true, deviceRegistration: {attestation: required}}
YAML
use_database "$work/attest"
start_in "$work/attest"
check "gatehouse resources add --app sets the DeviceCheck key from its .p8 file" bash -c \
  "cd '$work/attest' && '$bin' resources add --config gatehouse.yaml --app phone secrets name=devicecheck-private-key value=@'$work/attest/devicecheck.p8' >/dev/null"
if "$py" "$repo/Tests/e2e/attestation_client.py" "$base" attest-admin-token-0123456789-abcdefghij "$dc_port" "$work/attest/devicecheck.pub" "$repo/Tests/Fixtures/attestation" >"$work/attest/client.out" 2>&1; then
  pass "the attestation client's checks (below)"
else
  fail "the attestation client's checks (below)"
fi
grep -E '^  (ok|FAIL) ' "$work/attest/client.out" | sed 's/^/  /'
grep -q '"failures": 0' "$work/attest/client.out" || tail -5 "$work/attest/client.out"
stop
check "gatehouse resources show --app lists the fingerprint with the admin who added it" bash -c \
  "cd '$work/attest' && '$bin' resources show --config gatehouse.yaml --app phone fingerprints | grep -q 'ada-admin'"
check "the audit log has device.registered with the attestation's facts" bash -c \
  "cd '$work/attest' && '$bin' audit tail --type device.registered --config gatehouse.yaml | grep -q 'attestation.deviceIntegrity=device'"
sed -i 's/name: ada-admin, token: attest-admin-token-0123456789-abcdefghij/name: bo-admin, token: attest-admin-token-9876543210-abcdefghij/' "$work/attest/gatehouse.yaml"
start_in "$work/attest"
stop
check "when ada-admin leaves admin.tokens, the next start removes the fingerprints ada-admin added" bash -c \
  "cd '$work/attest' && ! '$bin' resources show --config gatehouse.yaml --app phone fingerprints | grep -q 'ada-admin'"
check "the removal is audited naming the admin it belonged to" bash -c \
  "cd '$work/attest' && '$bin' audit tail --type device-attestation.fingerprint_removed --config gatehouse.yaml | grep -q 'addedBy=ada-admin'"

echo "- activation: an independent Python client redeems activation data, answers invitations (emails from a real SMTP server), asks the registration state, logs out"
mkdir -p "$work/activation/box"
"$repo/.build/test-venv/bin/python" "$repo/Tests/email/smtp_server.py" --maildir "$work/activation/box" --port-file "$work/activation/smtp-port" --security starttls \
  --cert "$work/mail/cert.pem" --key "$work/mail/key.pem" --username mailer --password mail-password-e2e >"$work/activation/smtp.log" 2>&1 &
activation_smtp=$!
for _ in $(seq 1 100); do [ -s "$work/activation/smtp-port" ] && break; sleep 0.05; done
export SMTP_PASSWORD=mail-password-e2e MOBILE_SECRET=mobile-app-secret-0123456789-abcdefghijkl
cat >"$work/activation/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
admin:
  tokens: [{name: ops-admin, token: activation-admin-token-0123456789-abcdef}]
mail:
  transport: smtp
  from: Gatehouse <noreply@gatehouse.test>
  smtp:
    host: 127.0.0.1
    port: $(cat "$work/activation/smtp-port")
    security: starttls
    username: mailer
    password: \${SMTP_PASSWORD}
    rootCA: $work/mail/cert.pem
providers:
  - id: device
    type: device-key
  - id: activation
    type: activation
    config: {deviceKeys: device, hashCost: 4, lockout: {maxFailures: 2, lockoutDuration: 3600, maxLockoutDuration: 86400, permanentAfter: 3}}
  - id: activation-strict
    type: activation
    config: {deviceKeys: device, hashCost: 4, lockout: {maxFailures: 1, permanentAfter: 1}}
  - id: email
    type: email-code
apps:
  - id: mobile
    name: Mobile
    secret: \${MOBILE_SECRET}
    policy:
      identityProviders: [activation, device]
      defaultScopes: [openid, email, offline_access]
      pinPolicy: {minLength: 5}
      activation: {issueByApp: true, deepLink: "mobile://activate"}
  - id: kiosk
    policy: {identityProviders: [activation-strict, device], pinPolicy: {minLength: 5}}
  - id: profiles
    policy:
      identityProviders: [email]
      authenticators: [email]
      selfRegistration: true
      confirmProfile: true
      defaultScopes: [openid, profile, email, offline_access]
YAML
use_database "$work/activation"
start_in "$work/activation"
mkdir -p "$work/activation/answers"
if "$py" "$repo/Tests/e2e/activation_client.py" "$base" activation-admin-token-0123456789-abcdef "$work/activation/box" "$MOBILE_SECRET" "$work/activation/answers" >"$work/activation/client.out" 2>&1; then
  pass "the activation client's checks (below)"
else
  fail "the activation client's checks (below)"
fi
grep -E '^  (ok|FAIL) ' "$work/activation/client.out" | sed 's/^/  /'
grep -q '"failures": 0' "$work/activation/client.out" || tail -15 "$work/activation/client.out"
check "the activation, invitation, registration-state and stopped-flow answers match docs/openapi.yaml" "$py" "$work/validate_answers.py" "$repo/docs/openapi.yaml" "$work/activation/answers"
stop
kill "$activation_smtp" 2>/dev/null; wait "$activation_smtp" 2>/dev/null || true
check "gatehouse resources show --app lists the activations with their states, never a payload secret" bash -c \
  "cd '$work/activation' && '$bin' resources show --config gatehouse.yaml --app mobile activations | grep -q 'redeemed' && '$bin' resources show --config gatehouse.yaml --app mobile activations | grep -q 'revoked'"
check "gatehouse resources add --app issues activation data (JSON on standard output, once)" bash -c \
  "cd '$work/activation' && '$bin' resources add --config gatehouse.yaml --app mobile activations email=cli@example.com pin=86420 2>/dev/null | jq -e '.payload | startswith(\"ga1.\")' >/dev/null"
check "the audit log has each outcome, override, merge and lockout" bash -c \
  "cd '$work/activation' && for type in activation.redeemed activation.overridden activation.merged activation.locked activation.invitation_declined account.logout account.profile_confirmed; do '$bin' audit tail --type \$type --config gatehouse.yaml | grep -q . || exit 1; done"
# As whole words: a random request id (hex) holds five given digits now and then.
check "no activation PIN and no SMTP password appear in the server log" bash -c "! grep -qwE '24680|86420|97531|mail-password-e2e' '$work/serve.log'"
check "check-config shows the new form of plugin settings written the old way (pinPolicy, activation)" bash -c \
  "cd '$work/activation' && '$bin' check-config --config gatehouse.yaml | grep -q 'apps\[0\].policy: activation, pinPolicy is the old form of plugin settings; it reads as plugins: {\"activation\":{.*\"issueByApp\":true.*\"minLength\":5'"
check "the admin API answers the stored policy in the new form" bash -c \
  "cd '$work/activation' && '$bin' apps show --config gatehouse.yaml mobile | jq -e '.policy.plugins.activation.deepLink == \"mobile://activate\" and (.policy | has(\"pinPolicy\") | not)' >/dev/null"
unset MOBILE_SECRET

echo "- SCIM provisioning: scim2-tester's conformance checks, a deprovisioned user's tokens and sign-in"
mkdir -p "$work/scim"
cat >"$work/scim/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
scim:
  enabled: true
  links: [{provider: local, attribute: userName, claim: username}]
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
apps:
  - id: demo
    policy: {identityProviders: [local], selfRegistration: true, provisionedOnly: true}
YAML
use_database "$work/scim"
check "gatehouse scim-clients add issues a client and prints its token once" bash -c \
  "cd '$work/scim' && '$bin' scim-clients add entra --name 'Entra ID' --config gatehouse.yaml >'$work/scim/client.out' && grep -q 'Bearer token (shown once): ' '$work/scim/client.out'"
scim_token=$(sed -n 's/^Bearer token (shown once): //p' "$work/scim/client.out")
for user in grace walkin; do (cd "$work/scim" && printf '%s\n' 'a fine long password' | "$bin" users add "$user" --config gatehouse.yaml >/dev/null 2>&1); done
start_in "$work/scim"
if "$py" "$repo/Tests/e2e/scim_conformance.py" "$base" "$scim_token" >"$work/scim/conformance.out" 2>&1; then
  pass "scim2-tester: $(tail -1 "$work/scim/conformance.out")"
else
  fail "scim2-tester: $(tail -1 "$work/scim/conformance.out")"
  grep FAIL "$work/scim/conformance.out" | head -20
fi
scim() { curl -sS -X "$1" "$base/scim/v2/$2" -H "Authorization: Bearer $scim_token" -H 'Content-Type: application/scim+json' ${3:+-d "$3"}; }
grace_id=$(scim POST Users '{"schemas":["urn:ietf:params:scim:schemas:core:2.0:User"],"userName":"grace","active":true}' | jq -r .id)
check "POST /scim/v2/Users provisions grace" test -n "$grace_id" -a "$grace_id" != null
grace_tokens=$(flow demo authenticate grace "a fine long password")
check "grace signs in with her password; the sign-in meets her provisioned account (userName ↔ username)" jq -e '.tokens.access_token' <<<"$grace_tokens"
check "an account nobody provisioned is refused at an app for provisioned accounts (not_provisioned)" \
  jq -e '.reason == "not_provisioned"' <<<"$(flow demo authenticate walkin "a fine long password")"
scim PATCH "Users/$grace_id" '{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":[{"op":"Replace","path":"active","value":"False"}]}' >/dev/null
check "deprovisioned (Entra's active \"False\"): her access token is refused at once" test \
  "$(curl -sS "$base/oauth2/userinfo" -H "Authorization: Bearer $(jq -r .tokens.access_token <<<"$grace_tokens")" -o /dev/null -w '%{http_code}')" = 401
check "and her sign-in is refused as account_disabled" jq -e '.reason == "account_disabled"' <<<"$(flow demo authenticate grace "a fine long password")"
stop
check "the audit log has the SCIM writes and the disable, naming the client" bash -c \
  "cd '$work/scim' && '$bin' audit tail --type account.disabled --config gatehouse.yaml | grep -q 'scimClient=entra' && '$bin' audit tail --type scim.user.patched --config gatehouse.yaml | grep -q ."
check "gatehouse scim-clients list shows the client, never its token" bash -c \
  "cd '$work/scim' && '$bin' scim-clients list --config gatehouse.yaml | grep -q '^entra' && ! '$bin' scim-clients list --config gatehouse.yaml | grep -qF '$scim_token'"

echo "- SAML 2.0 sign-in at a real IdP (SimpleSAMLphp): both bindings, encrypted assertions, the SP's metadata"
mkdir -p "$work/saml"
ssp_port=$(python3 "$repo/Tests/lib/free_port.py")
app_port=$(python3 "$repo/Tests/lib/free_port.py")
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=gatehouse e2e SP" \
  -keyout "$work/saml/sp.key" -out "$work/saml/sp.crt" >/dev/null 2>&1
chmod 600 "$work/saml/sp.key"
if "$repo/Tests/saml/simplesamlphp.sh" start "$work/saml/idp" "$ssp_port" \
  "$base/saml/ssp/metadata|$base/oauth2/callback/ssp|" "$base/saml/sspenc/metadata|$base/oauth2/callback/sspenc|encrypt=$work/saml/sp.crt" \
  >"$work/saml/idp.out" 2>&1; then
  cat >"$work/saml/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
  issuer: $base
providers:
  - id: ssp
    type: saml
    name: Corp SSO
    config:
      idpMetadataURL: http://127.0.0.1:$ssp_port/saml2/idp/metadata.php
      allowedGroups: [staff, engineers]
  - id: sspenc
    type: saml
    name: Corp SSO (encrypted)
    config:
      idpMetadataURL: http://127.0.0.1:$ssp_port/saml2/idp/metadata.php
      privateKeyFile: $work/saml/sp.key
      certificateFile: $work/saml/sp.crt
      requestBinding: post
      signRequests: true
      requireEncryptedAssertion: true
apps:
  - id: web
    secret: web-secret-web-secret-web-secret-0001
    redirectURIs: [http://127.0.0.1:$app_port/cb]
    policy: {identityProviders: [ssp], selfRegistration: true}
  - id: webenc
    secret: web-secret-web-secret-web-secret-0002
    redirectURIs: [http://127.0.0.1:$app_port/cb]
    policy: {identityProviders: [sspenc], selfRegistration: true}
  - id: webprov
    secret: web-secret-web-secret-web-secret-0003
    redirectURIs: [http://127.0.0.1:$app_port/cb]
    policy: {identityProviders: [ssp], selfRegistration: true, provisionedOnly: true}
scim:
  enabled: true
  # A user Entra or Okta provisions with userName alice is the one whose NameID is alice.
  links: [{provider: ssp, attribute: userName, claim: subject}]
YAML
  use_database "$work/saml"
  (cd "$work/saml" && "$bin" scim-clients add idp --name "Corp IdP" --config gatehouse.yaml >"$work/saml/scim.out")
  saml_scim_token=$(sed -n 's/^Bearer token (shown once): //p' "$work/saml/scim.out")
  start_in "$work/saml"
  if "$py" "$repo/Tests/e2e/saml_client.py" "$base" "http://127.0.0.1:$ssp_port" "http://127.0.0.1:$app_port/cb" "$saml_scim_token" >"$work/saml/client.out" 2>&1; then
    pass "SAML: $(grep -c '  ok ' "$work/saml/client.out") checks against SimpleSAMLphp ($(tail -1 "$work/saml/client.out"))"
  else
    fail "SAML: $(tail -1 "$work/saml/client.out")"
    grep -v '  ok ' "$work/saml/client.out" | head -20
  fi
  check "the assertion IDs are remembered in the shared store (one use on every node)" \
    test "$(query "$work/saml" "SELECT COUNT(*) FROM plugin_data WHERE namespace = 'type:saml' AND key LIKE 'assertion:%'")" -ge 2
  stop
else
  fail "SimpleSAMLphp did not start: $(tail -3 "$work/saml/idp.out")"
fi
"$repo/Tests/saml/simplesamlphp.sh" stop "$work/saml/idp" || true

if [ "$database" = postgres ]; then
  echo "- storage copy: PostgreSQL into SQLite and back"
  check "storage copy moves the main database (named by its config file) into a new SQLite file, every table's count ok" bash -c \
    "'$bin' storage copy --from '$work/gatehouse.yaml' --to 'sqlite:$work/copy.sqlite' >'$work/copy.out' && grep -q '^  accounts: [1-9][0-9]* → [1-9][0-9]* ok' '$work/copy.out' && ! grep -q MISMATCH '$work/copy.out'"
  refused_copy() {
    local out status
    out=$("$bin" storage copy --from "$work/gatehouse.yaml" --to "sqlite:$work/copy.sqlite" 2>&1) && status=0 || status=$?
    [ "$status" -ne 0 ] && grep -q -- 'is not empty' <<<"$out" && grep -q -- '--replace' <<<"$out"
  }
  check "a second copy into the now filled file is refused (non-zero exit, naming --replace)" refused_copy
  back=$("$postgres" createdb "$pg" back)
  check "and back into an empty PostgreSQL database, with the same accounts" bash -c \
    "'$bin' storage copy --from 'sqlite:$work/copy.sqlite' --to '$back' >/dev/null && [ \"\$('$postgres' psql '$pg' -d back -tA -c 'SELECT COUNT(*) FROM accounts')\" = \"$(query "$work" "SELECT COUNT(*) FROM accounts")\" ]"
fi
check "migrate reports the schema" bash -c "'$bin' migrate | grep -q 'v1-foundation, v2-openid-provider, v3-lockouts-admin, v4-test-accounts, v5-provisional-identities, v6-disabled-apps, v7-key-activation, v8-verified-email-index, v9-devices, v10-activation-profiles'"
check "no password appears in the server log" bash -c "! grep -q 'correct horse\|fine long password' '$work/serve.log'"
# A copy of the database files (SQLite's WAL, -shm and free pages; PostgreSQL's relation files with
# their dead tuples, and its WAL) holds no secret this run used: passwords, app and admin secrets,
# the SMTP password, the key-encryption keys.
printf '%s\n' "correct horse battery staple" "a fine long password" "${introspector_secret:-}" "${loner_secret:-}" "${VAULT_SECRET:-}" \
  "${CUSTOM_SECRET:-}" "${BANK_APP_SECRET:-}" mail-password-e2e e2e-admin-token-e2e-admin-token-e2e-0001 e2e-admin-token-e2e-admin-token-e2e-0002 \
  e2e-admin-token-e2e-admin-token-e2e-0003 "${scim_token:-}" "${saml_scim_token:-}" >"$work/secrets.txt"
cat "$work/mail/kek" "$work/mail/kek2" >>"$work/secrets.txt" 2>/dev/null || true
if [ "$database" = postgres ]; then
  "$postgres" psql "$pg" -c CHECKPOINT >/dev/null
  scanned=("$(realpath -m "$pg")/data/base" "$(realpath -m "$pg")/data/pg_wal")
else
  mapfile -t scanned < <(find "$work" -name '*.sqlite' -o -name '*.sqlite-wal' -o -name '*.sqlite-shm')
fi
check "no secret of this run is in any database file, live or dead rows alike (${#scanned[@]} places)" "$py" -c "
import os, sys
secrets = [line.strip().encode() for line in open(sys.argv[1]) if len(line.strip()) >= 8]
found, read = [], 0
for place in sys.argv[2:]:
    paths = [os.path.join(d, f) for d, _, files in os.walk(place) for f in files] if os.path.isdir(place) else [place]
    for path in paths:
        data = open(path, 'rb').read()
        read += len(data)
        found += [(path, s[:6]) for s in secrets if s in data]
print(found, read, file=sys.stderr)
sys.exit(1 if found or read < 100000 else 0)
" "$work/secrets.txt" "${scanned[@]}"

echo
if [ "$failures" -gt 0 ]; then echo "e2e: $failures failure(s)"; tail -30 "$work/serve.log"; exit 1; fi
echo "e2e: all passed"
