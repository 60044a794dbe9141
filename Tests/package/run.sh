#!/usr/bin/env bash
# The packages as an administrator meets them (`make package-test`, part of `make test`):
#  1. `make release` and `make deb` artefacts, and "the previous release": commit $PREVIOUS_COMMIT
#     (the last before packaging, schema v13) built the same way and packaged as 0.1.0;
#  2. the Debian package in a clean bookworm root made with debootstrap (no Swift in it), booted
#     with systemd-nspawn, so the real systemd runs the unit with its hardening, credentials and
#     sd_notify readiness: install, sign-in, upgrade (migration, backup copy, data kept), downgrade
#     refused, rollback from the copy, remove, purge with and without asking; lintian and
#     systemd-analyze verify;
#  3. the container image built with podman from a debootstrap base: non-root, read-only root,
#     HEALTHCHECK, data volume, sign-in, restart, and its memory measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
PREVIOUS_COMMIT=${PREVIOUS_COMMIT:-05d84b1ed4a0c8b5e318447410a8ddcb675a02ee}
work=$repo/.build/package-test
logs=$repo/.build/test-logs/package
artifacts=$repo/.build/release-artifacts
previous_artifacts=$work/previous
mkdir -p "$work" "$logs"
podman=${PODMAN:-podman --storage-driver vfs --runtime runc --cgroup-manager cgroupfs}
# PACKAGE_TEST_SECTIONS picks sections while working on one (default: all).
sections=" ${PACKAGE_TEST_SECTIONS:-deb container kubernetes} "
failures=0
checks=0
nspawn_pid=""
container=""

cleanup() {
  set +e
  if [ -n "$nspawn_pid" ]; then
    kill "$nspawn_pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$nspawn_pid" 2>/dev/null
  fi
  [ -n "$container" ] && $podman rm -f "$container" >/dev/null 2>&1
  $podman volume rm -f gatehouse-package-test >/dev/null 2>&1
  $podman secret rm gatehouse-package-test-kek gatehouse-package-test-admin >/dev/null 2>&1
  # Untagged images (vfs storage copies whole file systems) would fill a CI machine's disk.
  $podman image prune -f >/dev/null 2>&1
  git -C "$repo" worktree remove --force "$work/previous-src" >/dev/null 2>&1
}
trap cleanup EXIT

check() { # check "what" command... : one assertion
  local what=$1
  shift
  checks=$((checks + 1))
  if "$@" >>"$logs/checks.log" 2>&1; then
    echo "  ok    $what"
  else
    echo "  FAIL  $what"
    failures=$((failures + 1))
  fi
}

version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/gatehouse/GatehouseCommand.swift)
arch=$(dpkg --print-architecture)

echo "== 1. release artefacts"
scripts/release.sh >"$logs/release.log" 2>&1 || { tail -30 "$logs/release.log"; exit 1; }
scripts/deb.sh >"$logs/deb.log" 2>&1 || { tail -30 "$logs/deb.log"; exit 1; }
deb=$artifacts/gatehouse_${version}_$arch.deb
tarball=$artifacts/gatehouse-$version-linux-$(uname -m).tar.gz
check "make release made the tarball with the binary, the config, the docs and the licences" \
  bash -c "tar -tzf '$tarball' | grep -q 'bin/gatehouse\$' && tar -tzf '$tarball' | grep -q 'etc/gatehouse.yaml\$' && tar -tzf '$tarball' | grep -q 'doc/operations.md\$' && tar -tzf '$tarball' | grep -q 'licences/swift-nio/LICENSE.txt\$' && tar -tzf '$tarball' | grep -q 'licences/swift-runtime/LICENSE.txt\$'"
check "the release binary links no Swift library (the runtime is static)" bash -c "! ldd '$artifacts/gatehouse-$version-linux-$(uname -m)/bin/gatehouse' | grep -E 'libswift|libFoundation|libdispatch|/opt/swift|not found'"
check "the package depends on Debian's libraries it loads (libsqlite3-0, libldap-2.5-0, libxmlsec1-openssl)" \
  bash -c "dpkg-deb -f '$deb' Depends | grep -q libsqlite3-0 && dpkg-deb -f '$deb' Depends | grep -q 'libldap-2.5-0' && dpkg-deb -f '$deb' Depends | grep -q 'libxmlsec1-openssl'"
check "lintian finds no error or warning in the package" bash -c "set -o pipefail; lintian --fail-on error,warning --tag-display-limit 0 '$deb' 2>&1 | tee '$logs/lintian.log'"
check "/etc/gatehouse/gatehouse.yaml is a conffile" bash -c "dpkg-deb --ctrl-tarfile '$deb' | tar -xO ./conffiles | grep -qx /etc/gatehouse/gatehouse.yaml"

# The previous release: the last commit before packaging, with this tree's packaging. Its binary
# has no sd_notify, so its unit is Type=exec.
if [ ! -e "$previous_artifacts/gatehouse_0.1.0_$arch.deb" ]; then
  rm -rf "$work/previous-src"
  git worktree prune
  git worktree add --detach "$work/previous-src" "$PREVIOUS_COMMIT" >"$logs/previous.log" 2>&1 \
    || { cat "$logs/previous.log"; echo "package test: commit $PREVIOUS_COMMIT is not in this clone (a shallow clone?): fetch the history" >&2; exit 1; }
  cp Package.resolved "$work/previous-src/Package.resolved" 2>/dev/null || true
  RELEASE_SOURCE="$work/previous-src" RELEASE_SCRATCH="$repo/.build-previous" RELEASE_OUT="$previous_artifacts" scripts/release.sh >>"$logs/previous.log" 2>&1 \
    || { tail -30 "$logs/previous.log"; exit 1; }
  scripts/deb.sh --tarball "$previous_artifacts/gatehouse-0.1.0-linux-$(uname -m).tar.gz" --service-type exec --out "$previous_artifacts" >>"$logs/previous.log" 2>&1 \
    || { tail -30 "$logs/previous.log"; exit 1; }
fi
previous_deb=$previous_artifacts/gatehouse_0.1.0_$arch.deb

# Signing alice in through the flow API, as an app's back end would.
password='correct horse battery staple 42'

sign_in() { # sign_in USER -> the access token
  local started
  started=$(curl -sS -X POST "$base/v1/flows" -H 'Content-Type: application/json' -d '{"app":"web","provider":"local"}')
  curl -sS -X POST "$base/v1/flows/$(jq -r .flow <<<"$started")" -H 'Content-Type: application/json' \
    -d "{\"answer\":{\"username\":\"$1\",\"password\":\"$password\"}}" | jq -r '.tokens.access_token // empty'
}
signs_in() { [ -n "$(sign_in "$1")" ]; }
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ]; }
wait_ready() { for _ in $(seq 1 100); do ready && return 0; sleep 0.2; done; return 1; }

if [[ $sections == *" deb "* ]]; then
echo "== 2. the Debian package in a booted bookworm root"
if [ ! -d "$work/base" ]; then
  debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,ca-certificates,curl,sqlite3 bookworm "$work/base.new" http://deb.debian.org/debian \
    >"$logs/debootstrap.log" 2>&1 || { tail -20 "$logs/debootstrap.log"; exit 1; }
  mv "$work/base.new" "$work/base"
fi
root=$work/root
rm -rf "$root"
cp -a "$work/base" "$root"
cp "$deb" "$previous_deb" "$root/root/"
# A precondition, not a check: the binary must run where no Swift is.
if ls "$root"/usr/bin/swift* "$root"/opt/swift >/dev/null 2>&1; then echo "package test: the debootstrap root has a Swift toolchain" >&2; exit 1; fi
if curl -s -o /dev/null --max-time 1 http://127.0.0.1:8080/; then
  echo "package test: something on this host answers on 127.0.0.1:8080, the packaged service's port (the container shares the host's network); stop it first" >&2
  exit 1
fi
systemd-nspawn -q -D "$root" -b --register=no --keep-unit --console=passive >"$logs/nspawn.log" 2>&1 &
nspawn_pid=$!
inside_pid=""
for _ in $(seq 1 100); do
  inside_pid=$(pgrep -P "$nspawn_pid" -x systemd || true)
  [ -n "$inside_pid" ] && nsenter -t "$inside_pid" -a systemctl is-system-running 2>/dev/null | grep -qE 'running|degraded' && break
  sleep 0.3
done
[ -n "$inside_pid" ] || { echo "package test: systemd-nspawn did not boot the root (log: $logs/nspawn.log)" >&2; cat "$logs/nspawn.log"; exit 1; }
inside() { nsenter -t "$inside_pid" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
apt_install() { inside apt-get install -y -q -o Dpkg::Options::=--force-confold "$@" >>"$logs/apt.log" 2>&1; }
base=http://127.0.0.1:8080
sqlite_count() { inside sqlite3 /var/lib/gatehouse/gatehouse.sqlite "$1"; }

apt_install /root/gatehouse_0.1.0_"$arch".deb
check "the previous release installs and its service starts" wait_ready
check "the gatehouse system user exists, without a login shell" bash -c "inside() { nsenter -t $inside_pid -a \"\$@\"; }; inside getent passwd gatehouse | grep -E '^gatehouse:x:[0-9]{3}:.*:/var/lib/gatehouse:/usr/sbin/nologin$'"
check "/var/lib/gatehouse is the service's, mode 0700" test "$(inside stat -c '%U %a' /var/lib/gatehouse)" = "gatehouse 700"
check "the key-encryption key was generated at install, root's only (0600)" test "$(inside stat -c '%U %a %s' /etc/gatehouse/kek)" = "root 600 45"
check "the config is readable by root and the service's group only" test "$(inside stat -c '%U:%G %a' /etc/gatehouse/gatehouse.yaml)" = "root:gatehouse 640"
inside gatehouse-admin apps create web --public --redirect-uri http://127.0.0.1:9/callback --provider local >>"$logs/admin.log" 2>&1
printf '%s\n' "$password" | nsenter -t "$inside_pid" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin gatehouse-admin users add alice >>"$logs/admin.log" 2>&1
# A database gatehouse-admin creates (a config of its own naming a new file) is the service user's.
inside sh -c "sed 's|/var/lib/gatehouse/gatehouse.sqlite|/var/lib/gatehouse/probe.sqlite|' /etc/gatehouse/gatehouse.yaml > /etc/gatehouse/probe.yaml && chmod 644 /etc/gatehouse/probe.yaml"
inside env GATEHOUSE_CONFIG=/etc/gatehouse/probe.yaml gatehouse-admin migrate >>"$logs/admin.log" 2>&1
check "gatehouse-admin runs commands as the service's user (the files it creates are the service's)" test "$(inside stat -c '%U %a' /var/lib/gatehouse/probe.sqlite 2>&1)" = "gatehouse 600"
inside sh -c 'rm -f /etc/gatehouse/probe.yaml /var/lib/gatehouse/probe.sqlite*'
check "gatehouse-admin passes the command's failure and its message on" bash -c "out=\$(nsenter -t $inside_pid -a gatehouse-admin apps show no-such-app 2>&1); [ \$? -eq 1 ] && grep -q \"No app 'no-such-app'\" <<<\"\$out\""
check "and keeps a \$ in an argument as typed (systemd would expand \${HOME})" bash -c "nsenter -t $inside_pid -a gatehouse-admin apps show 'x\${HOME}' 2>&1 | grep -qF \"No app 'x\\\${HOME}'\""
check "and leaves no copy of the key behind (no transient unit's credentials, nothing in /tmp)" test "$(inside sh -c 'ls /run/credentials | grep "^run-"; ls /tmp | grep gatehouse-admin' | xargs)" = ""
check "alice signs in on the previous release" signs_in alice
kid_before=$(curl -sS "$base/oauth2/jwks" | jq -r '.keys[0].kid')
accounts_before=$(sqlite_count "SELECT COUNT(*) FROM accounts")

echo "   upgrade to $version"
apt_install /root/gatehouse_"$version"_"$arch".deb
# Type=notify: the restart in the package's postinst returns once the broker said READY=1.
check "right after the upgrade the service is ready (sd_notify readiness)" ready
check "the running broker is $version" test "$(inside gatehouse version)" = "gatehouse $version"
check "the unit is Type=notify and its status is the broker's" bash -c "inside() { nsenter -t $inside_pid -a \"\$@\"; }; inside systemctl show gatehouse -p Type -p StatusText | tr '\n' ' ' | grep -q 'Type=notify StatusText=serving on 127.0.0.1:8080'"
check "the upgrade applied the new migrations" bash -c "inside() { nsenter -t $inside_pid -a \"\$@\"; }; inside sqlite3 /var/lib/gatehouse/gatehouse.sqlite 'SELECT identifier FROM grdb_migrations' | grep -qx v17-scim"
backup=$(inside sh -c 'ls /var/lib/gatehouse/gatehouse.sqlite.before-v14-device-authorizations.* 2>/dev/null' | head -1)
check "the SQLite database was copied before it was migrated (owner-only)" test "$(inside stat -c '%U %a' "${backup:-/none}" 2>/dev/null)" = "gatehouse 600"
check "the copy is the database as the previous release left it (schema v13)" test "$(inside sqlite3 "${backup:-/none}" 'SELECT MAX(identifier) FROM grdb_migrations WHERE identifier LIKE "v1_-%"')" = v13-flow-hand-offs
check "the journal says where the copy is" bash -c "inside() { nsenter -t $inside_pid -a \"\$@\"; }; inside journalctl -u gatehouse --no-pager | grep -q 'upgraded the database schema; the copy taken before is the way back'"
check "alice still signs in after the upgrade" signs_in alice
check "no account was lost or added" test "$(sqlite_count "SELECT COUNT(*) FROM accounts")" = "$accounts_before"
check "the signing key survived the upgrade (the KEK was kept)" test "$(curl -sS "$base/oauth2/jwks" | jq -r '.keys[0].kid')" = "$kid_before"

echo "   the service's sandbox"
main_pid=$(inside systemctl show gatehouse -p MainPID --value)
# The same process as the host sees it (nsenter into its mount namespace needs the host's pid).
host_pid=$(pgrep -f '^/usr/bin/gatehouse serve --config /etc/gatehouse/gatehouse.yaml' | head -1)
check "the broker runs as the gatehouse user" bash -c "nsenter -t $inside_pid -a cat /proc/$main_pid/status | grep -E '^Uid:' | awk '{print \$2}' | grep -qx \"\$(nsenter -t $inside_pid -a id -u gatehouse)\""
check "with no capabilities, not even in its bounding set" bash -c "nsenter -t $inside_pid -a cat /proc/$main_pid/status | grep -qE '^CapBnd:\s+0+$' && nsenter -t $inside_pid -a cat /proc/$main_pid/status | grep -qE '^CapEff:\s+0+$'"
check "with no_new_privs and a seccomp filter" bash -c "nsenter -t $inside_pid -a cat /proc/$main_pid/status | grep -qE '^NoNewPrivs:\s+1$' && nsenter -t $inside_pid -a cat /proc/$main_pid/status | grep -qE '^Seccomp:\s+2$'"
check "the KEK reaches it as a credential, not in its environment" bash -c "nsenter -t $inside_pid -a test -f /run/credentials/gatehouse.service/kek && ! nsenter -t $inside_pid -a cat /proc/$main_pid/environ | grep -qF \"\$(nsenter -t $inside_pid -a cat /etc/gatehouse/kek)\""
check "in its view of the files only the state directory is writable (ProtectSystem=strict)" bash -c "! nsenter -t $host_pid -m -- sh -c 'touch /etc/gatehouse/probe' 2>/dev/null && ! nsenter -t $host_pid -m -- sh -c 'touch /usr/probe' 2>/dev/null && nsenter -t $host_pid -m -- sh -c 'touch /var/lib/gatehouse/probe && rm /var/lib/gatehouse/probe'"
invocation=$(inside systemctl show gatehouse -p InvocationID --value)
# The seccomp filter answers EPERM (SystemCallErrorNumber): errno=1 in libdispatch's "Failed to set
# thread priority" lines. Its errno=13 lines (EACCES: an unprivileged process may not renice) are the
# runtime's usual noise outside any sandbox too.
check "this run's journal shows no system call refused by the filter" bash -c "nsenter -t $inside_pid -a journalctl _SYSTEMD_INVOCATION_ID=$invocation --no-pager | grep -q 'gatehouse starting' && ! nsenter -t $inside_pid -a journalctl _SYSTEMD_INVOCATION_ID=$invocation --no-pager | grep -E 'errno=1\b|Operation not permitted|SIGSYS|Bad system call'"
check "the unit's man page is in the package" inside test -f /usr/share/man/man1/gatehouse.1.gz
check "systemd-analyze verify accepts the unit" bash -c "nsenter -t $inside_pid -a systemd-analyze verify --man=no /lib/systemd/system/gatehouse.service 2>&1 | tee -a '$logs/verify.log' | grep gatehouse.service; test \${PIPESTATUS[0]} -eq 0"
inside systemd-analyze security gatehouse --no-pager >"$logs/security.log" 2>&1 || true
echo "   systemd-analyze security: $(grep -o 'Overall exposure level for gatehouse.service: .*' "$logs/security.log" || echo '?')"
exposure=$(grep -o 'Overall exposure level for gatehouse.service: [0-9.]*' "$logs/security.log" | grep -o '[0-9.]*$' || echo 10)
check "systemd rates the unit's exposure below 2.0 (of 10)" awk "BEGIN {exit !($exposure < 2.0)}"
# A system call the filter refuses would now kill the broker (a test-only drop-in: the unit answers
# EPERM), so the sign-ins below prove the filter allows what the broker does.
mkdir -p "$root/etc/systemd/system/gatehouse.service.d"
printf '[Service]\nSystemCallErrorNumber=\n' >"$root/etc/systemd/system/gatehouse.service.d/test-seccomp-kills.conf"
inside systemctl daemon-reload
inside systemctl restart gatehouse
killer_pid=$(inside systemctl show gatehouse -p MainPID --value)
for _ in 1 2 3; do sign_in alice >/dev/null; done
curl -sS "$base/.well-known/openid-configuration" "$base/oauth2/jwks" "$base/readyz" >/dev/null
check "with refused system calls made fatal, sign-ins run and the broker lives on" bash -c "$(declare -f sign_in signs_in); base=$base; password='$password'; signs_in alice && [ \"\$(nsenter -t $inside_pid -a systemctl show gatehouse -p MainPID --value)\" = $killer_pid ]"
rm -f "$root/etc/systemd/system/gatehouse.service.d/test-seccomp-kills.conf"
inside systemctl daemon-reload
inside systemctl restart gatehouse
started=$(date +%s%N)
check "a stop is graceful: the broker exits 0 on SIGTERM, in under 10 s" bash -c "nsenter -t $inside_pid -a timeout 25 systemctl stop gatehouse && [ \$(( (\$(date +%s%N) - $started) / 1000000000 )) -lt 10 ] && [ \"\$(nsenter -t $inside_pid -a systemctl show gatehouse -p Result -p ExecMainCode -p ExecMainStatus --value | xargs)\" = 'success 1 0' ]"
inside systemctl start gatehouse
check "a start returns once the broker is ready" ready

echo "   downgrade and rollback"
accounts_upgraded=$(sqlite_count "SELECT COUNT(*) FROM accounts")
apt_install --allow-downgrades /root/gatehouse_0.1.0_"$arch".deb
for _ in $(seq 1 50); do inside systemctl is-failed -q gatehouse && break; sleep 0.2; done
check "the older release refuses the newer schema and stays stopped" bash -c "nsenter -t $inside_pid -a systemctl is-failed -q gatehouse && ! curl -s --max-time 1 '$base/healthz'"
check "with the broker's message in the journal" bash -c "nsenter -t $inside_pid -a journalctl -u gatehouse --no-pager | grep -q 'has a newer schema than this Gatehouse'"
check "and the database untouched" test "$(sqlite_count "SELECT COUNT(*) FROM accounts"):$(sqlite_count "SELECT COUNT(*) FROM grdb_migrations WHERE identifier = 'v17-scim'")" = "$accounts_upgraded:1"
# The documented rollback: stop, put the copy back, start the older release.
inside systemctl stop gatehouse || true
inside sh -c "cd /var/lib/gatehouse && mv gatehouse.sqlite gatehouse.sqlite.newer && { [ ! -e gatehouse.sqlite-wal ] || mv gatehouse.sqlite-wal gatehouse.sqlite.newer-wal; } && rm -f gatehouse.sqlite-shm && cp -p '$backup' gatehouse.sqlite"
inside systemctl reset-failed gatehouse
inside systemctl start gatehouse
check "rolled back from the copy, the older release serves again" wait_ready
check "and alice signs in on it" signs_in alice
inside sh -c 'rm -f /var/lib/gatehouse/gatehouse.sqlite.newer /var/lib/gatehouse/gatehouse.sqlite.newer-wal'
apt_install /root/gatehouse_"$version"_"$arch".deb
check "upgrading again works, from the rolled-back database" bash -c "$(declare -f ready); base=$base; ready"
check "and took a second copy" test "$(inside sh -c 'ls /var/lib/gatehouse/gatehouse.sqlite.before-v14-* | wc -l')" = 2
# This release's own refusal: a migration from the future, as a later release would leave it.
inside systemctl stop gatehouse
inside sqlite3 /var/lib/gatehouse/gatehouse.sqlite "INSERT INTO grdb_migrations VALUES ('v99-from-the-future')"
inside systemctl start gatehouse >/dev/null 2>&1 || true
sleep 0.5
check "$version refuses a newer schema with exit status 3, and systemd does not restart it" test \
  "$(inside systemctl show gatehouse -p ExecMainStatus --value) $(inside systemctl show gatehouse -p NRestarts --value) $(inside systemctl is-failed gatehouse)" = "3 0 failed"
inside sqlite3 /var/lib/gatehouse/gatehouse.sqlite "DELETE FROM grdb_migrations WHERE identifier = 'v99-from-the-future'"
inside systemctl reset-failed gatehouse
inside systemctl start gatehouse

echo "   remove and purge"
apt_install --allow-downgrades /root/gatehouse_"$version"_"$arch".deb
inside apt-get remove -y -q gatehouse >>"$logs/apt.log" 2>&1
check "remove keeps the database, the key and the config" inside test -f /var/lib/gatehouse/gatehouse.sqlite -a -f /etc/gatehouse/kek -a -f /etc/gatehouse/gatehouse.yaml
check "and the service is gone" bash -c "! curl -s --max-time 1 '$base/healthz'"
inside apt-get purge -y -q gatehouse >>"$logs/apt.log" 2>&1
check "purge without being asked keeps the database and its key" inside test -f /var/lib/gatehouse/gatehouse.sqlite -a -f /etc/gatehouse/kek
check "but removes the config" inside test ! -e /etc/gatehouse/gatehouse.yaml
apt_install /root/gatehouse_"$version"_"$arch".deb
check "installing again continues with the same data: alice signs in" bash -c "$(declare -f wait_ready ready sign_in signs_in); base=$base; password='$password'; wait_ready && signs_in alice"
check "with the same signing key" test "$(curl -sS "$base/oauth2/jwks" | jq -r '.keys[0].kid')" = "$kid_before"
echo "gatehouse gatehouse/purge-data boolean true" | nsenter -t "$inside_pid" -a debconf-set-selections
inside apt-get purge -y -q gatehouse >>"$logs/apt.log" 2>&1
check "purge when asked (gatehouse/purge-data) removes the database and the key" inside test ! -e /var/lib/gatehouse -a ! -e /etc/gatehouse
check "and the config's permission override" bash -c "! nsenter -t $inside_pid -a dpkg-statoverride --list /etc/gatehouse/gatehouse.yaml"
inside systemctl poweroff >/dev/null 2>&1 || true
for _ in $(seq 1 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
nspawn_pid=""
fi

if [[ $sections == *" container "* ]]; then
echo "== 3. the container image"
scripts/container.sh >"$logs/container.log" 2>&1 || { tail -30 "$logs/container.log"; exit 1; }
image=localhost/gatehouse:$version
port=$(python3 Tests/lib/free_port.py)
base=http://127.0.0.1:$port
admin_token=$(head -c 30 /dev/urandom | base64)
container=gatehouse-package-test
$podman rm -f "$container" >/dev/null 2>&1 || true
$podman volume rm -f gatehouse-package-test >/dev/null 2>&1 || true
# The secrets as operations.md shows them: podman secrets, the key as a file, the admin token as a variable.
$podman secret rm gatehouse-package-test-kek gatehouse-package-test-admin >/dev/null 2>&1 || true
head -c 32 /dev/urandom | base64 | $podman secret create gatehouse-package-test-kek - >/dev/null
printf '%s' "$admin_token" | $podman secret create gatehouse-package-test-admin - >/dev/null
run_container() {
  $podman run -d --name "$container" --read-only --tmpfs /tmp --tmpfs /run/secrets:mode=0755,size=64k --network host \
    --ulimit nofile=16384:16384 --ulimit nproc=4096:4096 \
    -v gatehouse-package-test:/var/lib/gatehouse \
    -e GATEHOUSE_LISTEN="127.0.0.1:$port" -e GATEHOUSE_ISSUER="$base" \
    --secret gatehouse-package-test-kek,type=mount,target=gatehouse-kek,uid=10001,mode=0400 \
    --secret gatehouse-package-test-admin,type=env,target=GATEHOUSE_ADMIN_TOKEN \
    "$image" >>"$logs/podman.log" 2>&1
}
run_container
check "the container starts and becomes ready" wait_ready
check "its HEALTHCHECK (the image's own binary, no curl) says healthy" bash -c "$podman healthcheck run $container"
check "it runs as a user other than root" test "$($podman exec "$container" id -u)" = 10001
check "its root filesystem is read-only, even for root" bash -c "[ \"\$($podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' $container)\" = true ] && ! $podman exec --user 0 $container touch /usr/lib/x 2>/dev/null"
check "the key-encryption key is a file from a podman secret, not in the container's configuration" bash -c "$podman exec $container test -f /run/secrets/gatehouse-kek && ! $podman inspect $container | grep -qF \"\$($podman exec $container cat /run/secrets/gatehouse-kek)\""
check "the image declares its data volume, user and health check" bash -c "$podman image inspect $image --format '{{.Config.User}} {{json .Config.Volumes}} {{json .Config.Healthcheck.Test}}' | grep -q '10001:10001 {\"/var/lib/gatehouse\":{}} \[\"CMD\",\"/usr/bin/gatehouse\",\"healthcheck\"\]'"
curl -sS -X POST "$base/admin/v1/apps" -H "Authorization: Bearer $admin_token" -H 'Content-Type: application/json' \
  -d '{"id":"web","confidential":false,"redirectURIs":["http://127.0.0.1:9/callback"],"policy":{"identityProviders":["local"]}}' >>"$logs/admin.log"
printf '%s\n' "$password" | $podman exec -i "$container" gatehouse users add alice >>"$logs/admin.log" 2>&1
check "an app made over the admin API and a person added in the container: alice signs in" signs_in alice
$podman rm -f "$container" >/dev/null
run_container
check "restarted on the same volume, alice still signs in" bash -c "$(declare -f wait_ready ready sign_in signs_in); base=$base; password='$password'; wait_ready && signs_in alice"
# Memory, for the Kubernetes example's requests and limits: idle, then the peak over 20 sign-ins at
# once (the per-address flow-start limit is 30 a minute; bench/ measures sustained load).
pid=$($podman inspect --format '{{.State.Pid}}' "$container")
idle_rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
for _ in $(seq 1 20); do sign_in alice >/dev/null & done
wait
peak_rss=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
echo "   memory: idle RSS $((idle_rss / 1024)) MiB, peak $((peak_rss / 1024)) MiB over 20 sign-ins at once (bcrypt cost 12), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "idle_rss_kib=$idle_rss peak_rss_kib=$peak_rss" >"$logs/container-memory.txt"
$podman rm -f "$container" >/dev/null
container=""
fi

if [[ $sections == *" kubernetes "* ]]; then
echo "== 4. the Kubernetes example"
check "the example parses, probes /readyz and /healthz, takes secrets from a Secret and has a PodDisruptionBudget" \
  .build/e2e-venv/bin/python - <<'PY'
import yaml
docs = list(yaml.safe_load_all(open("packaging/kubernetes/gatehouse.yaml")))
kinds = {d["kind"]: d for d in docs}
assert set(kinds) >= {"Deployment", "PodDisruptionBudget", "ConfigMap", "Service"}, kinds.keys()
pod = kinds["Deployment"]["spec"]["template"]["spec"]
c = pod["containers"][0]
assert c["readinessProbe"]["httpGet"]["path"] == "/readyz" and c["livenessProbe"]["httpGet"]["path"] == "/healthz"
assert c["securityContext"]["readOnlyRootFilesystem"] and pod["securityContext"]["runAsNonRoot"]
secrets = {e["name"] for e in c["env"] if "valueFrom" in e}
assert {"GATEHOUSE_KEK", "GATEHOUSE_ADMIN_TOKEN", "GATEHOUSE_DATABASE_URL"} <= secrets, secrets
config = yaml.safe_load(kinds["ConfigMap"]["data"]["gatehouse.yaml"])
assert "keys" not in config, "a key file would shadow GATEHOUSE_KEK"
assert c["resources"]["requests"]["memory"].endswith("Mi") and c["resources"]["limits"]["memory"].endswith("Mi")
assert "postgres" in config["storage"]
PY
fi

echo "package tests: $((checks - failures)) of $checks checks passed"
[ "$failures" -eq 0 ]
