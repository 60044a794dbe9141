# The C peer of issue 51, Glewlwyd 2.7.5 from Debian, started by bench/peer.sh (sourced): a SQLite
# database from the package's own schema, its OpenID Connect plugin signing ES256 with a fresh key
# (the broker's default algorithm), and one confidential client for client_credentials.
# Sets peer_pid, peer_base, peer_auth (Basic credentials, base64) and peer_started_ms.

start_glewlwyd() { # start_glewlwyd FOLDER PORT
  local folder=$1 port=$2 admin
  mkdir -p "$folder"
  sqlite3 "$folder/glewlwyd.db" </usr/share/dbconfig-common/data/glewlwyd/install/sqlite3
  # The package's own configuration, with this port, a log file of the bench's and the database above.
  sed -e "s#^port=.*#port=$port#" -e "s#^external_url=.*#external_url=\"http://127.0.0.1:$port\"#" \
    -e "s#^log_file=.*#log_file=\"$folder/glewlwyd.log\"#" -e 's#^log_level=.*#log_level="ERROR"#' \
    -e "s#@include \"/etc/glewlwyd/glewlwyd-db.conf\"#database = { type = \"sqlite3\" path = \"$folder/glewlwyd.db\" };#" \
    /etc/glewlwyd/glewlwyd.conf >"$folder/glewlwyd.conf"
  peer_base="http://127.0.0.1:$port"
  glewlwyd --config-file="$folder/glewlwyd.conf" >"$folder/out.log" 2>&1 &
  peer_pid=$!
  # Any HTTP answer means it listens (the API answers 401 before a sign-in).
  for _ in $(seq 1 3000); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$peer_base/api/auth/" 2>/dev/null)" != 000 ] && break; kill -0 "$peer_pid" || break; sleep 0.01; done
  # The package's administrator (admin/password, from its schema) sets the plugin and the client up.
  admin=(-s -f -b "$folder/cookies" -c "$folder/cookies" -H 'Content-Type: application/json')
  curl "${admin[@]}" -d '{"username":"admin","password":"password"}' "$peer_base/api/auth/" >/dev/null
  python3 - "$peer_base" >"$folder/plugin.json" <<'PY'
import base64, json, sys
from cryptography.hazmat.primitives.asymmetric import ec
numbers = ec.generate_private_key(ec.SECP256R1()).private_numbers()
def b64(value): return base64.urlsafe_b64encode(value.to_bytes(32, "big")).rstrip(b"=").decode()
jwks = {"keys": [{"kty": "EC", "crv": "P-256", "x": b64(numbers.public_numbers.x), "y": b64(numbers.public_numbers.y),
                  "d": b64(numbers.private_value), "kid": "es1", "alg": "ES256", "use": "sig"}]}
print(json.dumps({"module": "oidc", "name": "oidc", "display_name": "OIDC", "enabled": True, "parameters": {
    "iss": sys.argv[1], "jwks-private": json.dumps(jwks), "default-kid": "es1", "jwks-show": True,
    "access-token-duration": 3600, "refresh-token-duration": 1209600, "code-duration": 600, "refresh-token-rolling": True,
    "allow-non-oidc": True, "auth-type-code-enabled": True, "auth-type-token-enabled": False, "auth-type-id-token-enabled": True,
    "auth-type-none-enabled": False, "auth-type-password-enabled": False, "auth-type-client-enabled": True,
    "auth-type-device-enabled": False, "auth-type-refresh-enabled": True, "scope": [], "subject-type": "public",
    "introspection-revocation-allowed": True, "introspection-revocation-auth-scope": [], "introspection-revocation-allow-target-client": True,
    "request-parameter-allow": False, "request-maximum-exp": 3600, "encrypt-out-token-allow": False, "pkce-allowed": True,
    "register-client-allowed": False, "session-management-allowed": False, "name-claim": "on-demand", "email-claim": "no",
    "address-claim": {"type": "no"}, "claims": [], "additional-parameters": []}}))
PY
  curl "${admin[@]}" -d @"$folder/plugin.json" "$peer_base/api/mod/plugin/" >/dev/null
  curl "${admin[@]}" -d '{"name":"api","display_name":"API","description":"bench","password_required":false,"scheme":{}}' "$peer_base/api/scope/" >/dev/null
  local secret
  secret=$(head -c 24 /dev/urandom | base64 | tr -d '=+/')
  # Its client secret is the database module's `password`, checked for client_secret_basic.
  curl "${admin[@]}" -d "{\"client_id\":\"bench\",\"name\":\"bench\",\"enabled\":true,\"confidential\":true,\"password\":\"$secret\",\"authorization_type\":[\"client_credentials\"],\"token_endpoint_auth_method\":[\"client_secret_basic\"],\"scope\":[\"api\"],\"redirect_uri\":[]}" "$peer_base/api/client/" >/dev/null
  peer_auth=$(printf 'bench:%s' "$secret" | base64 -w0)
  curl -sf -u "bench:$secret" -d 'grant_type=client_credentials&scope=api' "$peer_base/api/oidc/token" | jq -e .access_token >/dev/null \
    || { echo "Glewlwyd did not issue a client_credentials token:" >&2; tail -n 5 "$folder/glewlwyd.log" "$folder/out.log" >&2; return 1; }
}

# The peer's cold start: from exec to the first 200 of its JWKS, on a database set up already.
restart_glewlwyd() { # restart_glewlwyd FOLDER: sets peer_pid and peer_started_ms
  kill "$peer_pid" 2>/dev/null; wait "$peer_pid" 2>/dev/null || true
  local started
  started=$(date +%s%N)
  glewlwyd --config-file="$1/glewlwyd.conf" >>"$1/out.log" 2>&1 &
  peer_pid=$!
  for _ in $(seq 1 3000); do curl -sf -o /dev/null "$peer_base/api/oidc/jwks" 2>/dev/null && break; kill -0 "$peer_pid" || break; sleep 0.002; done
  peer_started_ms=$(( ($(date +%s%N) - started) / 1000000 ))
}
