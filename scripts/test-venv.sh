#!/usr/bin/env bash
# Creates .build/test-venv with the Python packages the Swift tests' real peers need (aiosmtpd: the
# SMTP server of the email-code tests; zxing-cpp and Pillow: the QR reader the TOTP plugin's codes
# are checked with; pyotp: an independent TOTP implementation). Installs from PyPI only what is missing.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
venv="$repo/.build/test-venv"
[ -x "$venv/bin/python" ] || python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -c 'import aiosmtpd' 2>/dev/null || "$venv/bin/python" -m pip install -q aiosmtpd
"$venv/bin/python" -c 'import zxingcpp, PIL, pyotp' 2>/dev/null || "$venv/bin/python" -m pip install -q zxing-cpp pillow pyotp
