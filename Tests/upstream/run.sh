#!/usr/bin/env bash
# Upstream sign-in (the `oidc` plugin) against real OpenID providers, all started here on loopback:
#   - another Gatehouse (its own config, keys and database; PKCE enforced; RS256 and ES256 ID tokens;
#     a key rotation in the middle),
#   - oidc-provider-mock from PyPI (claims, denial, revoked tokens; needs Python >= 3.12),
#   - Tests/upstream/hostile_upstream.py (what honest providers never do),
# and the broker under test in front of them, driven by Tests/upstream/upstream_test.py over HTTP and
# with a real headless Chromium.
#
#   Tests/upstream/run.sh            # needs .build/debug/gatehouse (or GATEHOUSE_BIN=path)
#   KEEP_WORK=1 Tests/upstream/run.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GATEHOUSE_BIN:-"$repo/.build/debug/gatehouse"}
venv="$repo/.build/upstream-venv"

"$repo/scripts/install-deps.sh" chromium chromium-driver python3-venv curl openssl

# oidc-provider-mock 0.4 needs Python 3.12 or later (3.11 would quietly get an older release).
python=""
for candidate in python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3 /root/.pyenv/versions/3.12*/bin/python3 python3; do
  path=$(command -v "$candidate" 2>/dev/null || true)
  [ -n "$path" ] || continue
  if "$path" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then python=$path; break; fi
done
[ -n "$python" ] || { echo "FAIL no Python 3.12 or later for oidc-provider-mock (install python3.12, or pyenv install 3.12)"; exit 1; }
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -c 'import oidc_provider_mock, selenium, requests, cryptography' 2>/dev/null \
  || "$venv/bin/python" -m pip install -q 'oidc-provider-mock>=0.4.8' selenium requests cryptography

work=$(mktemp -d /tmp/gatehouse-upstream.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 0.2
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  mkdir -p "$repo/.build/test-logs"
  cp "$work/down/server.log" "$repo/.build/test-logs/upstream-broker.log" 2>/dev/null || true
  cp "$work/up/server.log" "$repo/.build/test-logs/upstream-gatehouse.log" 2>/dev/null || true
  printf '%s\n' "${UP_SECRET:-}" "${WEB_SECRET:-}" "${MOCK_SECRET:-}" "${ursula_password:-}" "${GATEHOUSE_ADMIN_TOKEN:-}" >"$repo/.build/test-logs/upstream.secrets"
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

for _ in $(seq 1 120); do "$bin" version >/dev/null 2>&1 && break; sleep 1; done
cp "$bin" "$work/gatehouse"
bin="$work/gatehouse"
free_port() { python3 "$repo/Tests/lib/free_port.py"; }
up_port=$(free_port); down_port=$(free_port); mock_port=$(free_port); hostile_port=$(free_port); app_port=$(free_port)
secret() { python3 -c 'import secrets; print(secrets.token_urlsafe(32))'; }
export UP_SECRET WEB_SECRET MOCK_SECRET GATEHOUSE_ADMIN_TOKEN
UP_SECRET=$(secret); WEB_SECRET=$(secret); MOCK_SECRET=$(secret)
GATEHOUSE_ADMIN_TOKEN=upstream-admin-token-upstream-admin-0001
ursula_password='purple otter lantern'
mkdir -p "$work/up" "$work/down"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/assertion-key.pem" 2>/dev/null
openssl pkey -in "$work/assertion-key.pem" -pubout -out "$work/assertion-pub.pem" 2>/dev/null

# The upstream: another Gatehouse with a local user, one app per ID token algorithm.
cat >"$work/up/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$up_port
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
apps:
  - id: down-rs
    secret: \${UP_SECRET}
    redirectURIs: [http://127.0.0.1:$down_port/oauth2/callback/gh-rs]
    policy:
      identityProviders: [local]
      allowedScopes: [openid, profile, email, offline_access]
      idTokenSigningAlg: RS256
  - id: down-es
    secret: \${UP_SECRET}
    redirectURIs: [http://127.0.0.1:$down_port/oauth2/callback/gh-es]
    policy:
      identityProviders: [local]
      allowedScopes: [openid, profile, email, offline_access]
      idTokenSigningAlg: ES256
YAML

# The broker under test.
indent() { sed 's/^/          /' "$1"; }
cat >"$work/down/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$down_port
providers:
  - id: gh-rs
    type: oidc
    name: Upstream Gatehouse
    config:
      issuer: http://127.0.0.1:$up_port
      clientID: down-rs
      clientSecret: \${UP_SECRET}
      scopes: [openid, profile, offline_access]
      recheckInterval: 0
  - id: gh-es
    type: oidc
    name: Upstream Gatehouse (ES256)
    config:
      issuer: http://127.0.0.1:$up_port
      clientID: down-es
      clientSecret: \${UP_SECRET}
      clientAuthentication: client_secret_post
      signingAlgorithms: [ES256]
  - id: mock
    type: oidc
    name: Mock Provider
    config:
      issuer: http://127.0.0.1:$mock_port
      clientID: gatehouse-mock
      clientSecret: \${MOCK_SECRET}
      clientAuthentication: client_secret_post
      scopes: [openid, profile, email, offline_access]
      userinfo: true
      recheckInterval: 0
      groupsPrefix: "mock:"
      groupsFilter: "eng-.*"
      trustEmail: true
  - id: mock-b
    type: oidc
    config:
      issuer: http://127.0.0.1:$mock_port
      clientID: gatehouse-mock-4
      clientSecret: \${MOCK_SECRET}
      clientAuthentication: client_secret_post
      scopes: [openid, email]
      trustEmail: true
  - id: mock-untrusted
    type: oidc
    config:
      issuer: http://127.0.0.1:$mock_port
      clientID: gatehouse-mock-2
      clientSecret: \${MOCK_SECRET}
      scopes: [openid, email]
  - id: mock-corp
    type: oidc
    config:
      issuer: http://127.0.0.1:$mock_port
      clientID: gatehouse-mock-3
      clientSecret: \${MOCK_SECRET}
      scopes: [openid, email]
      allowedDomains: [corp.test]
  - id: evil
    type: oidc
    config:
      issuer: http://127.0.0.1:$hostile_port/evil
      clientID: gatehouse
      privateKey:
        pem: |
$(indent "$work/assertion-key.pem")
        keyID: broker-1
      userinfo: true
      responseMode: form_post
  - id: liar
    type: oidc
    config:
      issuer: http://127.0.0.1:$hostile_port/liar
      clientID: gatehouse
      clientSecret: unused-secret
  - id: slow
    type: oidc
    config:
      issuer: http://127.0.0.1:$hostile_port/slow
      clientID: gatehouse
      clientSecret: unused-secret
      timeout: 1
apps:
  - id: web
    name: Web App
    secret: \${WEB_SECRET}
    redirectURIs: [http://127.0.0.1:$app_port/callback]
    policy:
      identityProviders: [gh-es, gh-rs, mock, evil]
      selfRegistration: true
      allowedScopes: [openid, profile, email, groups, offline_access]
  - id: native
    name: Native App
    redirectURIs: [com.example.native:/oauth2redirect, http://127.0.0.1:$app_port/native]
    policy:
      identityProviders: [gh-rs, gh-es, mock, mock-untrusted, mock-corp, evil, liar, slow]
      selfRegistration: true
      allowedScopes: [openid, profile, email, groups, offline_access]
  - id: closed
    name: Invitation Only
    redirectURIs: [com.example.closed:/done]
    policy:
      identityProviders: [mock, mock-b, mock-untrusted]
      linkAccountsByVerifiedEmail: true
      allowedScopes: [openid, profile, email]
YAML

start_broker() { # start_broker DIR
  (cd "$1" && exec "$bin" serve --config gatehouse.yaml >server.log 2>&1) &
  pids+=($!)
}
wait_for() { # wait_for URL NAME LOG
  for _ in $(seq 1 150); do curl -sf "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL $2 did not come up at $1"; tail -n 30 "$3" 2>/dev/null || true; exit 1
}

(cd "$work/up" && printf '%s\n' "$ursula_password" | "$bin" users add ursula --config gatehouse.yaml >"$work/up/cli.log" 2>&1) \
  || { echo "FAIL users add ursula"; cat "$work/up/cli.log"; exit 1; }
start_broker "$work/up"
"$venv/bin/oidc-provider-mock" -H 127.0.0.1 -p "$mock_port" >"$work/mock.log" 2>&1 &
pids+=($!)
"$venv/bin/python" "$repo/Tests/upstream/hostile_upstream.py" --port "$hostile_port" >"$work/hostile.log" 2>&1 &
pids+=($!)
wait_for "http://127.0.0.1:$up_port/healthz" "the upstream Gatehouse" "$work/up/server.log"
wait_for "http://127.0.0.1:$mock_port/.well-known/openid-configuration" "oidc-provider-mock" "$work/mock.log"
wait_for "http://127.0.0.1:$hostile_port/evil/.well-known/openid-configuration" "the hostile upstream" "$work/hostile.log"
start_broker "$work/down"
wait_for "http://127.0.0.1:$down_port/healthz" "the broker" "$work/down/server.log"

echo "gatehouse upstream sign-in test (broker :$down_port, upstream Gatehouse :$up_port, mock :$mock_port, hostile :$hostile_port)"
status=0
UP_BASE="http://127.0.0.1:$up_port" DOWN_BASE="http://127.0.0.1:$down_port" MOCK_BASE="http://127.0.0.1:$mock_port" \
  HOSTILE_BASE="http://127.0.0.1:$hostile_port" APP_PORT="$app_port" URSULA_PASSWORD="$ursula_password" \
  ASSERTION_PUBLIC_KEY="$work/assertion-pub.pem" UP_DIR="$work/up" DOWN_DIR="$work/down" GATEHOUSE="$bin" \
  "$venv/bin/python" "$repo/Tests/upstream/upstream_test.py" || status=$?

# `gatehouse providers test` walks discovery, keys and the token endpoint, and names the failing step.
providers_check() { # providers_check DESCRIPTION EXPECTED-STATUS PATTERN PROVIDER
  local out code=0
  out=$(cd "$work/down" && "$bin" providers test "$4" --config gatehouse.yaml 2>&1) || code=$?
  if [ "$code" = "$2" ] && grep -q -- "$3" <<<"$out"; then echo "ok   $1"; else echo "FAIL $1 (exit $code)"; echo "$out"; status=1; fi
}
providers_check "providers test passes every step for the upstream Gatehouse" 0 "all 4 steps passed" gh-rs
providers_check "providers test names the discovery issuer mismatch" 1 "FAIL discovery: .*not exactly the configured issuer" liar
providers_check "providers test says a key set that times out" 1 "FAIL jwks" slow
providers_check "providers test reports refused client credentials" 1 "client credentials were refused" evil

if [ "$status" != 0 ]; then echo "--- broker log (last 40 lines) ---"; tail -n 40 "$work/down/server.log"; fi
exit "$status"
