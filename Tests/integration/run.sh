#!/usr/bin/env bash
# Integration test: Gatehouse as an OpenID Provider for a standard OIDC client library (Authlib) and a
# real headless browser (Debian's chromium + chromedriver, driven by Selenium). Starts the built
# binary with a throw-away config and database, and a throw-away OpenLDAP directory (Tests/ldap) for
# the `ldap` provider and a throw-away SMTP server (Tests/email, aiosmtpd with STARTTLS and AUTH) for
# `email-code`, then runs Tests/integration/oidc_test.py against it.
#
#   Tests/integration/run.sh        # needs .build/debug/gatehouse (or GATEHOUSE_BIN=path)
#   KEEP_WORK=1 Tests/integration/run.sh   # keep the work dir (config, log, screenshot)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${GATEHOUSE_BIN:-"$repo/.build/debug/gatehouse"}
venv="$repo/.build/integration-venv"
started_at=$(date +%s)

"$repo/scripts/install-deps.sh" chromium chromium-driver python3-venv curl slapd ldap-utils openssl samba samba-ad-dc winbind ldb-tools iproute2 \
  simplesamlphp php-cli php-xml php-mbstring mini-httpd

# A virtual environment (under .build, which git ignores) for the client side.
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import selenium, authlib, requests, jwt, pyotp, zxingcpp, PIL, axe_core_python' 2>/dev/null \
  || "$venv/bin/python" -m pip install -q selenium authlib requests pyjwt cryptography pyotp zxing-cpp pillow axe-core-python

work=$(mktemp -d /tmp/gatehouse-integration.XXXXXX)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  "$repo/Tests/ldap/slapd.sh" stop "$work/slapd" || true
  "$repo/Tests/samba/samba-dc.sh" stop "$work/samba" >/dev/null 2>&1 || true
  "$repo/Tests/saml/simplesamlphp.sh" stop "$work/idp" >/dev/null 2>&1 || true
  [ -n "${smtp_pid:-}" ] && kill "$smtp_pid" 2>/dev/null || true
  [ -n "${custom_pid:-}" ] && kill "$custom_pid" 2>/dev/null || true
  mkdir -p "$repo/.build/test-logs/console-screens"
  cp "$work"/screens/*.png "$repo/.build/test-logs/console-screens/" 2>/dev/null || true
  # The servers' logs and the secrets this run used, for the log scan at the end of `make test`.
  mkdir -p "$repo/.build/test-logs"
  cp "$work/server.log" "$repo/.build/test-logs/integration-server.log" 2>/dev/null || true
  cp "$work/riddle/server.log" "$repo/.build/test-logs/integration-riddle.log" 2>/dev/null || true
  printf '%s\n' "${WEBAPP_SECRET:-}" "${OTHER_SECRET:-}" "${alice_password:-}" "${bob_password:-}" mail-password service-secret \
    "${GATEHOUSE_ADMIN_TOKEN:-}" "${WEBAUTHN_ADMIN_TOKEN:-}" "${CUSTOM_SECRET:-}" "${BANK_APP_SECRET:-}" "violet harbor lantern" "copper meadow whistle" alice-password-1 bob-password-1 "a brand new passphrase 7" "a third passphrase 9x" "a long enough passphrase 42" Service-Secret-1 Alice-Secret-1 Peggy-Secret-1 Blue-Harbour-42! >"$repo/.build/test-logs/integration.secrets"
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

log_tail() { echo "--- last lines of the server log ---"; tail -n 40 "$work/server.log" 2>/dev/null || true; }

# The binary may be in the middle of a rebuild: wait until it runs, then test a private copy of it.
for _ in $(seq 1 120); do "$bin" version >/dev/null 2>&1 && break; sleep 1; done
"$bin" version >/dev/null 2>&1 || { echo "FAIL no runnable gatehouse binary at $bin (make build first)"; exit 1; }
cp "$bin" "$work/gatehouse"
bin="$work/gatehouse"

free_port() { python3 "$repo/Tests/lib/free_port.py"; }
broker_port=$(free_port)
callback_port=$(free_port)
while [ "$callback_port" = "$broker_port" ]; do callback_port=$(free_port); done
node2_port=$(free_port)
backchannel_port=$(free_port)
ldap_port=$(free_port)
base="http://127.0.0.1:$broker_port"
"$repo/Tests/ldap/slapd.sh" start "$work/slapd" "$ldap_port" >"$work/slapd-start.log" 2>&1 \
  || { echo "FAIL could not start slapd:"; cat "$work/slapd-start.log"; exit 1; }
# A Samba AD domain controller on a loopback address of its own (AD's ports are fixed).
for _ in 1 2 3; do
  ad_address="127.77.$((RANDOM % 256)).$((RANDOM % 250 + 2))"
  "$repo/Tests/samba/samba-dc.sh" start "$work/samba" "$ad_address" >"$work/samba-start.log" 2>&1 && break
  grep -q "in use" "$work/samba-start.log" || { echo "FAIL could not start the Samba AD DC:"; cat "$work/samba-start.log"; exit 1; }
  rm -rf "$work/samba"
done
# A SAML 2.0 IdP (SimpleSAMLphp): the browser posts the signed AuthnRequest to it, and it posts an
# encrypted assertion back.
ssp_port=$(free_port)
openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 2 -subj "/CN=gatehouse integration SP" \
  -keyout "$work/sp.key" -out "$work/sp.crt" >/dev/null 2>&1
chmod 600 "$work/sp.key"
"$repo/Tests/saml/simplesamlphp.sh" start "$work/idp" "$ssp_port" "$base/saml/corp-saml/metadata|$base/oauth2/callback/corp-saml|encrypt=$work/sp.crt" \
  >"$work/idp-start.log" 2>&1 || { echo "FAIL could not start SimpleSAMLphp:"; cat "$work/idp-start.log"; exit 1; }
"$repo/scripts/test-venv.sh"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/smtp-key.pem" -out "$work/smtp-cert.pem" -days 2 \
  -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
"$repo/.build/test-venv/bin/python" "$repo/Tests/email/smtp_server.py" --maildir "$work/mail" --port-file "$work/smtp-port" --security starttls \
  --cert "$work/smtp-cert.pem" --key "$work/smtp-key.pem" --username mailer --password mail-password >"$work/smtp.log" 2>&1 &
smtp_pid=$!
for _ in $(seq 1 100); do [ -s "$work/smtp-port" ] && break; sleep 0.05; done
[ -s "$work/smtp-port" ] || { echo "FAIL could not start the SMTP server:"; cat "$work/smtp.log"; exit 1; }
secret() { python3 -c 'import secrets; print(secrets.token_urlsafe(32))'; }
# The custom-api plugin's peer (the app's own registration API), for bankapp's stateless sign-in.
export CUSTOM_SECRET BANK_APP_SECRET
CUSTOM_SECRET=$(secret)
BANK_APP_SECRET=$(secret)
python3 "$repo/Tests/custom-api/app_api.py" --secret="$CUSTOM_SECRET" --port-file "$work/custom-port" --log "$work/custom-calls.jsonl" >"$work/custom-api.log" 2>&1 &
custom_pid=$!
for _ in $(seq 1 100); do [ -s "$work/custom-port" ] && break; sleep 0.05; done
[ -s "$work/custom-port" ] || { echo "FAIL could not start the custom-api peer:"; cat "$work/custom-api.log"; exit 1; }
export WEBAPP_SECRET OTHER_SECRET
WEBAPP_SECRET=$(secret)
OTHER_SECRET=$(secret)
alice_password='correct horse battery'
bob_password='tulip marble engine'

cfg="$work/gatehouse.yaml"
cat >"$cfg" <<YAML
environment: development
server:
  listen: 127.0.0.1:$broker_port
  # Explicit, so that the second node (same config, another port) names the same issuer.
  issuer: $base
mail:
  transport: smtp
  from: Gatehouse <noreply@gatehouse.test>
  smtp:
    host: 127.0.0.1
    port: $(cat "$work/smtp-port")
    security: starttls
    username: mailer
    password: mail-password
    rootCA: $work/smtp-cert.pem
providers:
  - id: email
    type: email-code
  - id: local
    type: local
    config: {bcryptCost: 4}
  - id: bank
    type: custom-api
    config:
      url: http://127.0.0.1:$(cat "$work/custom-port")/register
      authentication: hmac
      secret: \${CUSTOM_SECRET}
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
        emailAttr: mail
        nameAttr: displayName
        lockedFilter: (employeeType=disabled)
      groupSearch:
        baseDN: ou=groups,dc=example,dc=org
        filter: (objectClass=groupOfNames)
        userMatchers: [{userAttr: DN, groupAttr: member}]
        nameAttr: cn
  - id: corp-ad
    type: ldap
    config:
      activeDirectory: true
      url: ldaps://$ad_address
      rootCA: $work/samba/ca.pem
      bindDN: gatehouse-svc@gatehouse.test
      bindPassword: Service-Secret-1
      userSearch:
        baseDN: DC=gatehouse,DC=test
  - id: corp-saml
    type: saml
    name: Corp SSO
    config:
      idpMetadataURL: http://127.0.0.1:$ssp_port/saml2/idp/metadata.php
      privateKeyFile: $work/sp.key
      certificateFile: $work/sp.crt
      requestBinding: post
      signRequests: true
      requireEncryptedAssertion: true
      groupsPrefix: "corp:"
admin:
  # The admin console admits members of this LDAP group (alice) besides accounts with the role.
  consoleGroups: [admins]
  console:
    identityProviders: [local, corp-ldap]
apps:
  - id: bankapp
    name: Bank App
    secret: \${BANK_APP_SECRET}
    policy:
      identityProviders: [bank]
  - id: webapp
    name: Web App
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
      allowedScopes: [openid, profile, email, offline_access]
      # webapp is also the resource server that checks other's tokens.
      introspectTokensOf: [other]
  - id: spa
    name: Single Page App
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
  - id: other
    secret: \${OTHER_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/other]
    policy:
      identityProviders: [local]
      clientCredentialsGrant: true
  - id: mailapp
    name: Mail App
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [email]
      selfRegistration: true
      allowedScopes: [openid, profile, email]
      defaultScopes: [openid, profile, email]
  - id: vault
    name: Vault
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
      authenticators: [email]
      secondFactor: email
      allowedScopes: [openid, profile, email]
  - id: portal-a
    name: Portal A
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
      selfRegistration: true
      logout:
        postLogoutRedirectURIs: [http://127.0.0.1:$callback_port/bye]
        backchannelLogoutURI: http://127.0.0.1:$backchannel_port/backchannel/portal-a
  - id: portal-b
    name: Portal B
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
      authenticators: [email]
      secondFactor: email
      logout:
        postLogoutRedirectURIs: [http://127.0.0.1:$callback_port/bye]
        backchannelLogoutURI: http://127.0.0.1:$backchannel_port/backchannel/portal-b
  - id: samlapp
    name: SAML App
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [corp-saml]
      selfRegistration: true
      allowedScopes: [openid, profile, email, groups]
      defaultScopes: [openid, profile, email, groups]
  - id: adapp
    name: AD App
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [corp-ad]
      allowedScopes: [openid, profile, email, groups]
      defaultScopes: [openid, profile, email, groups]
      plugins:
        corp-ad: {passwordChange: true}
  - id: intranet
    name: Intranet
    secret: \${WEBAPP_SECRET}
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [corp-ldap]
      allowedScopes: [openid, profile, email, groups]
      defaultScopes: [openid, profile, email, groups]
YAML
export LDAP_BIND_PASSWORD=service-secret
# Admins read the readiness detail that /readyz keeps from the public.
export GATEHOUSE_ADMIN_TOKEN=integration-admin-token-integration-0001

# The database (data/) lands in the work dir.
cd "$work"
add_user() { # add_user NAME PASSWORD, with the CLI (password on standard input)
  printf '%s\n' "$2" | "$bin" users add "$1" --config "$cfg" >>"$work/cli.log" 2>&1 \
    || { echo "FAIL gatehouse users add $1:"; cat "$work/cli.log"; exit 1; }
}
add_user alice "$alice_password"
add_user bob "$bob_password"
add_user erin "$alice_password"
add_user carol "violet harbor lantern"
add_user dave "copper meadow whistle"

"$bin" serve --config "$cfg" >"$work/server.log" 2>&1 &
server_pid=$!
ready=0
for _ in $(seq 1 100); do
  if curl -sf "$base/healthz" >/dev/null 2>&1; then ready=1; break; fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ "$ready" != 1 ]; then echo "FAIL the broker did not come up on $base"; log_tail; exit 1; fi

echo "gatehouse OIDC integration test (broker $base, callback port $callback_port, work dir $work)"
mkdir -p "$work/tmp"
status=0
TMPDIR="$work/tmp" GATEHOUSE_BASE_URL="$base" GATEHOUSE_CALLBACK_PORT="$callback_port" \
  ALICE_PASSWORD="$alice_password" BOB_PASSWORD="$bob_password" GATEHOUSE_SCREENSHOT="$work/sign-in.png" GATEHOUSE_MAILDIR="$work/mail" \
  GATEHOUSE_SAML_IDP="http://127.0.0.1:$ssp_port/" "$venv/bin/python" "$repo/Tests/integration/oidc_test.py" || status=$?

# Sessions and logout, with a second node on the same database (an admin there ends a session).
sed "s/listen: 127.0.0.1:$broker_port/listen: 127.0.0.1:$node2_port/" "$cfg" >"$work/node2.yaml"
"$bin" serve --config "$work/node2.yaml" >"$work/node2.log" 2>&1 &
node2_pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$node2_port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
TMPDIR="$work/tmp" GATEHOUSE_BASE_URL="$base" GATEHOUSE_CALLBACK_PORT="$callback_port" GATEHOUSE_MAILDIR="$work/mail" GATEHOUSE_SCREENSHOTS="$work/screens" \
  ALICE_PASSWORD="$alice_password" GATEHOUSE_NODE2_URL="http://127.0.0.1:$node2_port" GATEHOUSE_BACKCHANNEL_PORT="$backchannel_port" \
  PYTHONPATH="$repo/Tests/integration" "$venv/bin/python" "$repo/Tests/integration/session_test.py" || { status=1; tail -n 20 "$work/node2.log"; }
kill -TERM "$node2_pid" 2>/dev/null || true
wait "$node2_pid" 2>/dev/null || true
cp "$work/node2.log" "$repo/.build/test-logs/integration-node2.log" 2>/dev/null || true

# The admin console in the browser (after the session checks: it signs people in and out).
TMPDIR="$work/tmp" GATEHOUSE_BASE_URL="$base" GATEHOUSE_CALLBACK_PORT="$callback_port" GATEHOUSE_SCREENSHOTS="$work/screens" \
  PYTHONPATH="$repo/Tests/integration" "$venv/bin/python" "$repo/Tests/integration/console_test.py" || status=1


# The `ldap` provider from the command line and in /readyz, against the same directory.
ldap_check() { # ldap_check DESCRIPTION COMMAND...
  if "${@:2}" >"$work/check.out" 2>&1; then echo "ok   $1"; else echo "FAIL $1"; cat "$work/check.out"; status=1; fi
}
providers_test() { "$bin" providers test corp-ldap --config "$cfg" "$@"; }
every_step_passes() {
  local out; out=$(printf '%s\n' alice-password-1 | providers_test --username alice --password-stdin) || return 1
  grep -q '^ok   tls: encrypted, certificate verified' <<<"$out" && grep -q '^ok   groups: member of admins, engineers' <<<"$out"
}
wrong_service_password_fails_at_service_bind() {
  local out rc=0; out=$(LDAP_BIND_PASSWORD=wrong providers_test --username alice) || rc=$?
  [ "$rc" -eq 1 ] && grep -q '^FAIL service bind: Invalid credentials' <<<"$out"
}
wrong_user_password_fails_at_bind() {
  local out rc=0; out=$(printf 'nope\n' | providers_test --username bob --password-stdin) || rc=$?
  [ "$rc" -eq 1 ] && grep -q '^FAIL bind:' <<<"$out"
}
ldap_check "LDAP. gatehouse providers test walks connect, TLS, service bind, search, bind and groups" every_step_passes
ldap_check "LDAP. providers test names the failing step: a wrong service password fails at 'service bind' (exit 1)" wrong_service_password_fails_at_service_bind
ldap_check "LDAP. providers test with a wrong user password fails at 'bind' (exit 1)" wrong_user_password_fails_at_bind
admin_readiness() { curl -s -H "Authorization: Bearer $GATEHOUSE_ADMIN_TOKEN" "$base/admin/v1/readiness"; }
ldap_check "LDAP. /admin/v1/readiness reports the directory healthy" bash -c "$(declare -f admin_readiness); admin_readiness | jq -e '.checks[\"corp-ldap\"].healthy == true'"
"$repo/Tests/ldap/slapd.sh" stop "$work/slapd"
sleep 1.1  # the provider shares one health result for a second
ldap_check "LDAP. directory stopped: /readyz answers 503 with the status only (no error text to the public)" bash -c \
  "[ \$(curl -s -o '$work/ready.json' -w '%{http_code}' '$base/readyz') = 503 ] && jq -e '. == {\"status\": \"unavailable\"}' '$work/ready.json'"
ldap_check "LDAP. directory stopped: admins see corp-ldap unhealthy with the reason" bash -c "$(declare -f admin_readiness); admin_readiness | jq -e '.checks[\"corp-ldap\"].healthy == false and (.checks[\"corp-ldap\"].detail | length > 0)'"
ldap_check "LDAP. directory stopped: the log names the unhealthy check once" bash -c "[ \$(grep -c 'check is unhealthy.*corp-ldap\|corp-ldap.*check is unhealthy' '$work/server.log') -ge 1 ]"
"$repo/Tests/ldap/slapd.sh" start "$work/slapd" "$ldap_port" >>"$work/slapd-start.log" 2>&1
sleep 2.2  # calls fail fast for 2 s after the directory was last found unreachable
ldap_check "LDAP. directory back: /readyz is ready again without a restart" bash -c "curl -sf '$base/readyz' | jq -e '.status == \"ready\"'"

# The plugin boundary: a broker with only the test-only `riddle` plugin, whose challenge type the
# server has never heard of, signs a person in through the generic page in Chromium and the flow API.
riddle_bin=${RIDDLE_BIN:-"$repo/.build/debug/riddle-broker"}
riddle_port=$(free_port)
mkdir -p "$work/riddle"
cat >"$work/riddle/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$riddle_port
storage:
  sqlite:
    path: $work/riddle/riddle.sqlite
providers:
  - id: sphinx
    type: riddle
    config: {question: "What walks on four legs in the morning?", answer: man}
apps:
  - id: thebes
    name: Thebes
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [sphinx]
      selfRegistration: true
YAML
"$riddle_bin" "$work/riddle/gatehouse.yaml" >"$work/riddle/server.log" 2>&1 &
riddle_pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$riddle_port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
TMPDIR="$work/tmp" RIDDLE_BASE_URL="http://127.0.0.1:$riddle_port" RIDDLE_CALLBACK="http://127.0.0.1:$callback_port/callback" \
  "$venv/bin/python" "$repo/Tests/integration/plugin_page_test.py" || { status=1; tail -n 20 "$work/riddle/server.log"; }
kill -TERM "$riddle_pid" 2>/dev/null || true
wait "$riddle_pid" 2>/dev/null || true

# A plugin's browser test on a broker of its own: own_broker NAME PORT USER PASSWORD SCRIPT [VAR=value...]
# adds USER to "$work/NAME/gatehouse.yaml" (written before), serves it on PORT, runs
# Tests/integration/SCRIPT with the variables, stops the broker and keeps its log.
own_broker() {
  local name=$1 port=$2 user=$3 password=$4 script=$5 pid
  shift 5
  printf '%s\n' "$password" | "$bin" users add "$user" --config "$work/$name/gatehouse.yaml" >>"$work/cli.log" 2>&1
  "$bin" serve --config "$work/$name/gatehouse.yaml" >"$work/$name/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
  env TMPDIR="$work/tmp" "$@" "$venv/bin/python" "$repo/Tests/integration/$script" || { status=1; tail -n 20 "$work/$name/server.log"; }
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  cp "$work/$name/server.log" "$repo/.build/test-logs/integration-$name.log" 2>/dev/null || true
}

# Authenticator apps (the `totp` plugin) in Chromium, on a broker of their own: the QR code on the
# setup page, photographed and read by zxing-cpp, sets up pyotp as the person's app.
totp_port=$(free_port)
mkdir -p "$work/totp"
cat >"$work/totp/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$totp_port
storage:
  sqlite:
    path: $work/totp/totp.sqlite
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
  - id: app-code
    type: totp
    config: {issuer: Gatehouse Integration}
apps:
  - id: authapp
    name: Authenticator App Demo
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
      authenticators: [app-code]
      secondFactor: app-code
accountPage:
  authenticators: [app-code]
  secondFactor: app-code
YAML
own_broker totp "$totp_port" tess "$alice_password" totp_page_test.py \
  TOTP_BASE_URL="http://127.0.0.1:$totp_port" TOTP_CALLBACK="http://127.0.0.1:$callback_port/callback" TOTP_PASSWORD="$alice_password"

# Passkeys (the `webauthn` plugin) in Chromium with its virtual authenticator, on a broker of their
# own whose issuer is http://localhost (WebAuthn needs a domain, not an IP address, as relying party).
webauthn_port=$(free_port)
mkdir -p "$work/webauthn"
cat >"$work/webauthn/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$webauthn_port
  issuer: http://localhost:$webauthn_port
storage:
  sqlite:
    path: $work/webauthn/webauthn.sqlite
admin:
  tokens:
    - name: ops
      token: \${WEBAUTHN_ADMIN_TOKEN}
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
  - id: passkeys
    type: webauthn
    config: {rpName: Gatehouse Integration}
apps:
  - id: passkeyapp
    name: Passkey App
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [passkeys]
      selfRegistration: true
  - id: keyapp
    name: Key App
    redirectURIs: [http://127.0.0.1:$callback_port/callback]
    policy:
      identityProviders: [local]
      authenticators: [passkeys]
      secondFactor: passkeys
accountPage:
  authenticators: [passkeys]
  secondFactor: passkeys
YAML
export WEBAUTHN_ADMIN_TOKEN
WEBAUTHN_ADMIN_TOKEN=$(secret)
own_broker webauthn "$webauthn_port" bob "$bob_password" webauthn_page_test.py \
  WEBAUTHN_BASE_URL="http://localhost:$webauthn_port" WEBAUTHN_CALLBACK="http://127.0.0.1:$callback_port/callback" WEBAUTHN_PASSWORD="$bob_password" \
  GATEHOUSE_SCREENSHOTS="$work/screens"

# The device authorization grant (RFC 8628): a TV polling by the RFC's sequence, Chromium on the
# verification page; then token exchange (RFC 8693) by the TV's back end with Authlib; on a broker of its own.
device_port=$(free_port)
mkdir -p "$work/device"
# The bank's request-object key, made by Authlib (the public half goes into the config).
"$venv/bin/python" -c '
import json, sys
from authlib.jose import JsonWebKey
key = JsonWebKey.generate_key("EC", "P-256", is_private=True)
open(sys.argv[1], "w").write(json.dumps(key.as_dict(is_private=True)))
open(sys.argv[2], "w").write(json.dumps(key.as_dict(is_private=False)))
' "$work/device/bank-private.json" "$work/device/bank-public.json"
cat >"$work/device/gatehouse.yaml" <<YAML
environment: development
server:
  listen: 127.0.0.1:$device_port
storage:
  sqlite:
    path: $work/device/device.sqlite
providers:
  - id: local
    type: local
    config: {bcryptCost: 4}
apps:
  - id: tv
    name: Living-room TV
    policy:
      identityProviders: [local]
      deviceAuthorizationGrant: true
      devicePollingInterval: 1
      allowedScopes: [openid, profile, offline_access]
  - id: api
    name: TV back end
    secret: \${DEVICE_API_SECRET}
    policy:
      identityProviders: [local]
      clientCredentialsGrant: true
      allowedScopes: [openid, jobs]
      tokenExchange:
        audiences: [billing]
        subjectTokensOf: [tv]
  - id: billing
    name: Billing
    secret: \${DEVICE_API_SECRET}
    policy:
      identityProviders: [local]
  - id: bank
    name: Bank
    secret: \${DEVICE_API_SECRET}
    redirectURIs: [https://bank.example/callback]
    policy:
      identityProviders: [local]
      requirePushedAuthorizationRequests: true
      requestObjectKeys:
        - $(cat "$work/device/bank-public.json")
YAML
export DEVICE_API_SECRET
DEVICE_API_SECRET=$(secret)
own_broker device "$device_port" tara "$alice_password" grants_test.py \
  DEVICE_BASE_URL="http://127.0.0.1:$device_port" DEVICE_PASSWORD="$alice_password" DEVICE_BANK_KEY="$(cat "$work/device/bank-private.json")"

if [ "$status" -ne 0 ]; then log_tail; fi
echo "integration test finished in $(($(date +%s) - started_at))s"
exit "$status"
