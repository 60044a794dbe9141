#!/usr/bin/env bash
# A throw-away Samba Active Directory domain controller for the `ldap` plugin's AD tests.
#
#   Tests/samba/samba-dc.sh start DIR ADDR   on first use provision the domain GATEHOUSE.TEST into
#                                            DIR (test CA and a DC certificate for ADDR, the people
#                                            below), then serve LDAP (389, StartTLS), LDAPS (636)
#                                            and the global catalogue on ADDR only, and wait until
#                                            it answers
#   Tests/samba/samba-dc.sh tool  DIR ARGS   samba-tool ARGS on the running DC's database (e.g.
#                                            `user disable oscar`)
#   Tests/samba/samba-dc.sh stop  DIR        stop it (SIGTERM, then SIGKILL after 10 s) and take
#                                            ADDR off the loopback interface again; idempotent
#
# ADDR is a loopback address of the DC's own (127.0.0.2 to 127.255.255.254): AD's ports are fixed,
# so the DC gets an address instead of ports. It is added to `lo` while the DC runs (this needs
# root, as the test machines run; without it, run the tests in a network namespace of their own).
#
# The domain (NetBIOS name GATEHOUSE, base DC=gatehouse,DC=test):
#   service account  gatehouse-svc / Service-Secret-1  (CN=gatehouse-svc,CN=Users,...)
#   alice            Alice-Secret-1   UPN alice@gatehouse.test, mail alice@gatehouse.test,
#                                     displayName "Alice Liddell"; member of engineers and admins
#   grace            Grace-Secret-1   UPN grace.hopper@corp.example (differs from sAMAccountName)
#   dave             Dave-Secret-1    disabled (userAccountControl ACCOUNTDISABLE)
#   erin             Erin-Secret-1    must change her password at next sign-in (pwdLastSet 0)
#   frank            Frank-Secret-1   account expired (accountExpires in the past)
#   heidi            Heidi-Secret-1   locked out (five wrong passwords after start; threshold 5)
#   ivan             Ivan-Secret-1    may sign in at no hour (logonHours all zero)
#   judy             Judy-Secret-1    may sign in only at the workstation OTHERPC
#   peggy            Peggy-Secret-1   must change her password (the password-change tests' own)
#   oscar            Oscar-Secret-1   enabled (the tests disable him while he is signed in)
#   trent            Trent-Secret-1   enabled (the per-entry lockout test's own)
#   groups: engineers (alice), admins (alice), staff (the group engineers: alice is a member
#   through nesting only), auditors (empty).
#
# Files in DIR: ca.pem (test CA, 1 day), dc.pem + dc-key.pem (subjectAltName IP:ADDR,
# DNS:dc1.gatehouse.test), etc/smb.conf, private/sam.ldb, samba.log, samba.pid, address.
#
# Needs the Debian packages samba, samba-ad-dc (Debian 12 ships the DC in samba), winbind,
# ldb-tools, ldap-utils, iproute2 and openssl.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

realm="GATEHOUSE.TEST"
domain="GATEHOUSE"
base="DC=gatehouse,DC=test"
admin_password="Admin-Secret-1"
start_timeout_s=60
stop_timeout_s=10

usage() {
  echo "usage: $0 start DIR ADDR | tool DIR SAMBA-TOOL-ARGS... | stop DIR" >&2
  exit 2
}

die() { echo "samba-dc.sh: $*" >&2; exit 1; }

# shellcheck source=../lib/live_process.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/live_process.sh"

# True when PID is a live (not zombie) samba of this DC: it renames itself "samba: root process",
# so the check is the samba binary holding files of DIR open, not another process that got the pid.
alive() {
  live_process "$1" || return 1
  [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = /usr/sbin/samba ] || return 1
  find "/proc/$1/fd" -maxdepth 1 -lname "$dir/*" 2>/dev/null | grep -q .
}

read_pid() {
  [ -f "$1/samba.pid" ] || return 0
  tr -dc '0-9' <"$1/samba.pid"
}

require_tools() {
  local tool
  for tool in samba samba-tool ldbmodify ldapsearch ip openssl; do
    command -v "$tool" >/dev/null \
      || die "$tool is not installed: run scripts/install-deps.sh samba samba-ad-dc winbind ldb-tools ldap-utils iproute2 openssl"
  done
}

make_certificates() {
  local dir="$1" addr="$2"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 \
    -keyout "$dir/ca-key.pem" -out "$dir/ca.pem" \
    -subj "/O=Gatehouse tests/CN=Gatehouse throw-away AD test CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
  openssl req -new -newkey rsa:2048 -nodes \
    -keyout "$dir/dc-key.pem" -out "$dir/dc.csr" -subj "/CN=dc1.gatehouse.test" 2>/dev/null
  cat >"$dir/dc-ext.cnf" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:$addr, DNS:dc1.gatehouse.test
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
EOF
  openssl x509 -req -days 1 -in "$dir/dc.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca-key.pem" \
    -CAcreateserial -out "$dir/dc.pem" -extfile "$dir/dc-ext.cnf" 2>/dev/null
  rm -f "$dir/dc.csr" "$dir/ca.srl"
  # Samba refuses a key file others can read.
  chmod 600 "$dir/ca-key.pem" "$dir/dc-key.pem"
}

# samba-tool on the domain's database directly (the DC need not run).
tool() {
  samba-tool "$@" -H "$dir/private/sam.ldb" -s "$dir/etc/smb.conf" >>"$dir/provision.log" 2>&1 \
    || { cat "$dir/provision.log" >&2; die "samba-tool $1 $2 failed"; }
}

modify() {
  ldbmodify -H "$dir/private/sam.ldb" --configfile="$dir/etc/smb.conf" >>"$dir/provision.log" 2>&1 \
    || { cat "$dir/provision.log" >&2; die "ldbmodify failed"; }
}

provision() {
  local dir="$1" addr="$2"
  samba-tool domain provision --targetdir="$dir" --realm="$realm" --domain="$domain" \
    --server-role=dc --dns-backend=NONE --use-rfc2307 --host-name=dc1 \
    --adminpass="$admin_password" --option="interfaces = $addr" \
    --option="bind interfaces only = yes" >"$dir/provision.log" 2>&1 \
    || { cat "$dir/provision.log" >&2; die "samba-tool domain provision failed"; }
  make_certificates "$dir" "$addr"
  # Only what the tests use, on the DC's own address, with the test CA's certificate. A changed
  # password stops working at once (Samba accepts it for 60 more minutes by default).
  sed -i "/^\[global\]/a\\
	server services = ldap, kdc\\
	pid directory = $dir/run\\
	tls enabled = yes\\
	tls keyfile = $dir/dc-key.pem\\
	tls certfile = $dir/dc.pem\\
	tls cafile = $dir/ca.pem\\
	log file = $dir/samba.log\\
	max log size = 0\\
	old password allowed period = 0" "$dir/etc/smb.conf"
  mkdir -p "$dir/run"

  # Lock after five wrong passwords, for 30 minutes; passwords never age on their own.
  tool domain passwordsettings set --account-lockout-threshold=5 --account-lockout-duration=30 \
    --reset-account-lockout-after=30 --max-pwd-age=0 --min-pwd-age=0
  tool user add gatehouse-svc Service-Secret-1
  tool user add alice Alice-Secret-1 --use-username-as-cn --given-name=Alice --surname=Liddell \
    --mail-address=alice@gatehouse.test
  modify <<EOF
dn: CN=alice,CN=Users,$base
changetype: modify
replace: displayName
displayName: Alice Liddell
EOF
  tool user add grace Grace-Secret-1 --mail-address=grace@corp.example
  modify <<EOF
dn: CN=grace,CN=Users,$base
changetype: modify
replace: userPrincipalName
userPrincipalName: grace.hopper@corp.example
EOF
  tool user add dave Dave-Secret-1
  tool user disable dave
  tool user add erin Erin-Secret-1 --must-change-at-next-login
  tool user add frank Frank-Secret-1
  # 2000-01-01 in AD's 100 ns intervals since 1601.
  modify <<EOF
dn: CN=frank,CN=Users,$base
changetype: modify
replace: accountExpires
accountExpires: 125911584000000000
EOF
  tool user add heidi Heidi-Secret-1
  tool user add ivan Ivan-Secret-1
  # 21 zero bytes: no hour of the week is allowed.
  modify <<EOF
dn: CN=ivan,CN=Users,$base
changetype: modify
replace: logonHours
logonHours:: AAAAAAAAAAAAAAAAAAAAAAAAAAAA
EOF
  tool user add judy Judy-Secret-1
  modify <<EOF
dn: CN=judy,CN=Users,$base
changetype: modify
replace: userWorkstations
userWorkstations: OTHERPC
EOF
  tool user add peggy Peggy-Secret-1 --must-change-at-next-login
  tool user add oscar Oscar-Secret-1
  tool user add trent Trent-Secret-1
  local group
  for group in engineers admins staff auditors; do tool group add "$group"; done
  tool group addmembers engineers alice
  tool group addmembers admins alice
  tool group addmembers staff engineers
}

lo_has() { ip -o addr show dev lo | grep -q " $1/"; }

cmd_start() {
  [ $# -eq 2 ] || usage
  local dir="$1" addr="$2" pid waited=0 i
  # Octets without leading zeros: iproute2 would read 127.0.0.01 as 127.0.0.1.
  local octet='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
  [[ "$addr" =~ ^127\.$octet\.$octet\.$octet$ ]] && [ "$addr" != "127.0.0.1" ] \
    || die "ADDR must be a loopback address other than 127.0.0.1, got '$addr'"
  require_tools
  # Root runs samba with DIR's smb.conf: DIR must be the caller's own, readable by nobody else.
  if [ -e "$dir" ]; then
    [ -d "$dir" ] && [ ! -L "$dir" ] && [ "$(stat -c %u "$dir")" = "$(id -u)" ] \
      || die "$dir exists and is not a directory of $(id -un)'s own; use a fresh one (mktemp -d)"
  fi
  mkdir -p "$dir"
  chmod 700 "$dir"
  dir="$(cd "$dir" && pwd)"
  pid="$(read_pid "$dir")"
  if alive "$pid"; then die "samba is already running for $dir (pid $pid): run '$0 stop $dir' first"; fi
  if (exec 3<>"/dev/tcp/$addr/636") 2>/dev/null; then die "$addr:636 is already in use"; fi

  if ! lo_has "$addr"; then
    ip addr add "$addr/32" dev lo 2>/dev/null \
      || die "cannot add $addr to the loopback interface (needs root, or a network namespace of its own)"
    echo "$addr" >"$dir/address"
  fi
  [ -f "$dir/etc/smb.conf" ] || provision "$dir" "$addr"

  echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) starting samba on $addr" >>"$dir/samba.log"
  # -i: in the foreground (so $! is its pid); -M single: one process, light on a 2-core machine.
  samba -i -M single -s "$dir/etc/smb.conf" </dev/null >>"$dir/samba.log" 2>&1 &
  pid=$!
  echo "$pid" >"$dir/samba.pid"

  until LDAPTLS_CACERT="$dir/ca.pem" timeout 3 ldapsearch -x -LLL -o nettimeout=2 \
    -H "ldaps://$addr" -D "gatehouse-svc@gatehouse.test" -w Service-Secret-1 \
    -b "$base" -s base dn >/dev/null 2>&1; do
    if ! alive "$pid"; then
      echo "samba exited during start; $dir/samba.log:" >&2
      tail -40 "$dir/samba.log" >&2
      cmd_stop "$dir" >/dev/null 2>&1 || true
      exit 1
    fi
    if [ "$waited" -ge $((start_timeout_s * 5)) ]; then
      echo "samba did not answer on ldaps://$addr within ${start_timeout_s} s; $dir/samba.log:" >&2
      tail -40 "$dir/samba.log" >&2
      cmd_stop "$dir" >/dev/null 2>&1 || true
      exit 1
    fi
    sleep 0.2
    waited=$((waited + 1))
  done

  # heidi locks out the way AD accounts do: wrong passwords, one after another.
  if [ ! -f "$dir/heidi-locked" ]; then
    for i in 1 2 3 4 5; do
      LDAPTLS_CACERT="$dir/ca.pem" ldapwhoami -x -H "ldaps://$addr" \
        -D "heidi@gatehouse.test" -w "wrong-$i" >/dev/null 2>&1 || true
    done
    touch "$dir/heidi-locked"
  fi
  echo "samba AD DC running on ldaps://$addr (pid $pid, dir $dir)"
}

cmd_stop() {
  [ $# -eq 1 ] || usage
  local dir="$1" pid i
  [ -d "$dir" ] || return 0
  dir="$(cd "$dir" && pwd)"
  pid="$(read_pid "$dir")"
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < stop_timeout_s * 10; i++)); do
      alive "$pid" || break
      sleep 0.1
    done
    if alive "$pid"; then
      echo "samba (pid $pid) did not stop within ${stop_timeout_s} s: sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$dir/samba.pid"
  if [ -f "$dir/address" ]; then
    ip addr del "$(cat "$dir/address")/32" dev lo 2>/dev/null || true
    rm -f "$dir/address"
  fi
}

cmd_tool() {
  [ $# -ge 2 ] || usage
  local dir="$1"
  shift
  samba-tool "$@" -H "$dir/private/sam.ldb" -s "$dir/etc/smb.conf"
}

[ $# -ge 1 ] || usage
command="$1"
shift
case "$command" in
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  tool) cmd_tool "$@" ;;
  *) usage ;;
esac
