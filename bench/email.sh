#!/usr/bin/env bash
# Benchmarks emailed one-time codes: passwordless `email-code` flows through the flow API against a
# release build, each delivered to a real SMTP server on loopback (Tests/email/smtp_server.py, aiosmtpd,
# STARTTLS + AUTH, a fresh connection per message). Each code is two requests: start the flow, answer
# with an address (the answer returns once the SMTP server accepted the message). Prints codes sent/s,
# request latency percentiles, the broker's peak RSS, and checks the SMTP server's count.
# Usage: bench/email.sh [--duration 10s] [--connections 32] [--threads 2] [--durability full|normal] [--security starttls|none]
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
security=starttls
while [ $# -gt 0 ]; do
  case $1 in
    --security) security=$2; shift 2 ;;
    *) parse_common_option "$1" "${2:-}" || { echo "unknown option $1" >&2; exit 2; }; shift 2 ;;
  esac
done
prepare python3-venv openssl
"$repo/scripts/test-venv.sh"
smtp_pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; [ -n "$smtp_pid" ] && kill "$smtp_pid" 2>/dev/null; rm -rf "$work"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1
auth=(--username mailer --password bench-mail-password)
[ "$security" = none ] && auth=()
"$repo/.build/test-venv/bin/python" "$repo/Tests/email/smtp_server.py" --maildir "$work/mail" --port-file "$work/smtp-port" \
  --security "$security" --cert "$work/cert.pem" --key "$work/key.pem" "${auth[@]}" >"$work/smtp.log" 2>&1 &
smtp_pid=$!
for _ in $(seq 1 100); do [ -s "$work/smtp-port" ] && break; sleep 0.05; done
{ server_yaml; cat <<YAML; } >"$work/bench.yaml"
mail:
  transport: smtp
  from: Bench <noreply@bench.example>
  smtp:
    host: 127.0.0.1
    port: $(cat "$work/smtp-port")
    security: $security
    rootCA: $work/cert.pem
$([ "$security" = none ] || printf '    username: mailer\n    password: bench-mail-password\n')
providers:
  - id: email
    type: email-code
    config:
      resend: {maxPerIP: 100000}
apps:
  - id: bench
    policy:
      identityProviders: [email]
      selfRegistration: true
      lockout:
        maxFlowStartsPerIPPerMinute: 1000000
YAML
start_server "$work/bench.yaml"
export BENCH_LIB="$repo/bench/lib"
out=$(wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$repo/bench/lib/email_code.lua" "$base")
printf '\nGatehouse email-code benchmark: SMTP %s, durability %s, %s connections, %s wrk threads, %s, %s cores (aiosmtpd on the same cores)\n' \
  "$security" "$durability" "$connections" "$threads" "$duration" "$(nproc)"
echo "$out" | grep '^CODES' | sed 's/^CODES /codes: /'
echo "$out" | grep '^RESULT' | sed 's/^RESULT /requests (start + answer): /'
echo "peak RSS: $(rss_peak_mb) MB"
echo "messages the SMTP server holds: $(find "$work/mail" -name '*.eml' | wc -l) (must be at least the codes sent)"
echo "(non2xx must stay 0)"
