# Shared by the bench scripts (sourced): options, the release build, a work folder and a port,
# starting the server, and its peak RSS. Sets repo, bin, work, port, base, pid and the options below.
repo=$(cd "$(dirname "$0")/.." && pwd)
duration=${duration:-10s} connections=32 threads=2 durability=full

# parse_common_option NAME VALUE: returns 1 when NAME is not a common option.
parse_common_option() {
  case $1 in
    --duration) duration=$2 ;;
    --connections) connections=$2 ;;
    --threads) threads=$2 ;;
    --durability) durability=$2 ;;
    *) return 1 ;;
  esac
}

free_port() { python3 "$repo/Tests/lib/free_port.py"; }

prepare() { # prepare PACKAGES...: installs what is missing, brings the release build up to date, makes a work folder and port
  "$repo/scripts/install-deps.sh" wrk curl jq "$@"
  if [ -n "${GATEHOUSE_BIN:-}" ]; then
    # A binary built elsewhere, e.g. the packaged one: make release's bin/gatehouse.
    bin=$(readlink -f "$GATEHOUSE_BIN")
  else
    bin="$repo/.build/release/gatehouse"
    echo "building the release binary if needed (about 10 minutes the first time on 2 cores)..."
    (cd "$repo" && swift build -c release --product gatehouse >/dev/null)
  fi
  work=$(mktemp -d /tmp/gatehouse-bench.XXXXXX)
  pid=""
  trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
  port=$(free_port)
  base="http://127.0.0.1:$port"
}

start_server() { # start_server CONFIG
  "$bin" serve --config "$1" --log-level warning >"$work/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do curl -sf "$base/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "the server did not start:" >&2; tail -20 "$work/serve.log" >&2; return 1
}

server_yaml() { # server_yaml [DATABASE]: the config's first lines: development mode, the bench port, the database (default $work/bench.sqlite)
  cat <<YAML
environment: development
server:
  listen: 127.0.0.1:$port
storage:
  sqlite:
    path: ${1:-$work/bench.sqlite}
    durability: $durability
YAML
}

fsso_keys() { # the RSA key pair the fsso-jwt benchmarks sign assertions with: $work/key.pem, $work/public.pem
  openssl genrsa -out "$work/key.pem" 2048 2>/dev/null
  openssl rsa -in "$work/key.pem" -RSAPublicKey_out -out "$work/public.pem" 2>/dev/null
}

fsso_provider_yaml() { # fsso_provider_yaml APP: a providers entry "acme-sso" (fsso-jwt) trusting issuer acme, kid k1, $work/public.pem, for APP
  cat <<YAML
  - id: acme-sso
    type: fsso-jwt
    config:
      maxLifetime: 1h
      issuers:
        - issuer: acme
          apps: [$1]
          keys:
            - kid: k1
              pem: |
$(sed 's/^/                /' "$work/public.pem")
YAML
}

sign_assertions() { # sign_assertions FILE COUNT: COUNT single-use RS256 assertions (PyJWT, $work/key.pem), one per line, from $venv's Python
  "$venv/bin/python" - "$work/key.pem" "$2" >"$1" <<'PY'
import sys, time, uuid, jwt
from concurrent.futures import ProcessPoolExecutor
from cryptography.hazmat.primitives.serialization import load_pem_private_key
# Loaded once: PyJWT given PEM text parses and checks the RSA key on every call (most of its cost).
key, count = load_pem_private_key(open(sys.argv[1], "rb").read(), None), int(sys.argv[2])
now = int(time.time())
def sign(i):
    claims = {"iss": "acme", "sub": f"user{i % 500}", "aud": "identity-service", "jti": uuid.uuid4().hex, "iat": now, "exp": now + 3000}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
with ProcessPoolExecutor() as pool:
    for token in pool.map(sign, range(count), chunksize=500):
        print(token)
PY
}

grant_app_config() { # grant_app_config: $work/bench.yaml with one confidential app "bench" for client_credentials; sets secret (exported as BENCH_SECRET) and auth (Basic, base64)
  secret=$(head -c 32 /dev/urandom | base64 | tr -d '=+/')
  auth=$(printf 'bench:%s' "$secret" | base64 -w0)
  export BENCH_SECRET=$secret
  { server_yaml; cat <<YAML
providers:
  - id: local
    type: local
apps:
  - id: bench
    secret: \${BENCH_SECRET}
    policy:
      identityProviders: [local]
      clientCredentialsGrant: true
      allowedScopes: [openid, api]
      defaultScopes: [openid]
YAML
  } >"$work/bench.yaml"
}

start_nginx() { # start_nginx: the ceiling, nginx answering a constant with one worker, on nginx_port; sets nginx_pid
  nginx_port=$(free_port)
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { default_type application/json; return 200 '{"ok":true}'; }
  }
}
NGINX
  nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" &
  nginx_pid=$!
}

rss_peak_mb() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$pid/status"; }
