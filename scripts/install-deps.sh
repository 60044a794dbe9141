#!/usr/bin/env bash
# Installs the Debian packages given as arguments when they are missing. Needs root or sudo only
# when something is missing.
set -euo pipefail
missing=()
for package in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then run=(); elif command -v sudo >/dev/null; then run=(sudo); else
  echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# The tests start PostgreSQL servers of their own: Debian's package must not create and start a
# cluster of its own on port 5432.
if printf '%s\n' "${missing[@]}" | grep -qx postgresql; then
  "${run[@]}" mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" | "${run[@]}" tee /etc/postgresql-common/createcluster.d/no-main.conf >/dev/null
fi
# nginx (the benchmarks' ceiling) and Glewlwyd (their C peer) must not start servers of their own either: the
# benchmark starts one on a loopback port. Nor Samba (the AD tests provision a domain controller of
# their own), nor mini-httpd (the web server SimpleSAMLphp's package needs; the SAML tests serve it
# with PHP's own server on a loopback port). Package scripts ask policy-rc.d before starting a service.
if grep -qs "gatehouse scripts/install-deps.sh" /usr/sbin/policy-rc.d; then
  echo "warning: /usr/sbin/policy-rc.d was left by an interrupted install and stops every service from starting; delete it" >&2
fi
policy=""
if printf '%s\n' "${missing[@]}" | grep -qx 'nginx\(-light\)\?\|samba\|samba-ad-dc\|winbind\|mini-httpd\|simplesamlphp\|glewlwyd' && [ ! -e /usr/sbin/policy-rc.d ]; then
  policy=/usr/sbin/policy-rc.d
  printf '#!/bin/sh\n# written by gatehouse scripts/install-deps.sh while it installs nginx or samba; delete if left over\nexit 101\n' | "${run[@]}" tee "$policy" >/dev/null
  "${run[@]}" chmod +x "$policy"
  trap '"${run[@]}" rm -f "$policy"' EXIT
fi
"${run[@]}" apt-get update -qq
"${run[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Samba's packages enable their daemons for the next boot (smbd, nmbd and winbind on every
# interface with Debian's default smb.conf): the tests start a domain controller of their own.
if printf '%s\n' "${missing[@]}" | grep -qx 'samba\|samba-ad-dc\|winbind' && [ -d /run/systemd/system ]; then
  "${run[@]}" systemctl disable --now smbd nmbd winbind samba-ad-dc >/dev/null 2>&1 || true
fi
if printf '%s\n' "${missing[@]}" | grep -qx 'mini-httpd' && [ -d /run/systemd/system ]; then
  "${run[@]}" systemctl disable --now mini-httpd >/dev/null 2>&1 || true
fi
# Glewlwyd (bench/peer.sh's C peer) would serve on port 4593 at every boot: the bench starts its own.
if printf '%s\n' "${missing[@]}" | grep -qx 'glewlwyd' && [ -d /run/systemd/system ]; then
  "${run[@]}" systemctl disable --now glewlwyd >/dev/null 2>&1 || true
fi
