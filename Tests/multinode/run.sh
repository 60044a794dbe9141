#!/usr/bin/env bash
# Three broker nodes on one PostgreSQL (Tests/multinode/multinode.py): any node continues any flow.
#   Tests/multinode/run.sh          # needs .build/debug/gatehouse (or GATEHOUSE_BIN=path)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv="$repo/.build/multinode-venv"
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import requests, jwt, cryptography, pyotp, soft_webauthn' 2>/dev/null || "$venv/bin/python" -m pip install -q requests pyjwt cryptography pyotp soft-webauthn
exec "$venv/bin/python" "$repo/Tests/multinode/multinode.py"
