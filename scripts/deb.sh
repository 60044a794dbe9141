#!/usr/bin/env bash
# `make deb`: the Debian package of the release tarball (`make release`), built with Debian's own
# tools (dpkg-buildpackage and debhelper, from packaging/debian):
#   .build/release-artifacts/gatehouse_VERSION_ARCH.deb
# Options (the package tests use them to package an older build as "the previous release"):
#   --tarball FILE         the release tarball (default: the newest one for this machine)
#   --version VERSION      the package version (default: the tarball's)
#   --service-type TYPE    notify (default) or exec, for a binary from before 0.2.0 (no sd_notify)
#   --out DIR              where the .deb goes (default .build/release-artifacts)
set -euo pipefail
cd "$(dirname "$0")/.."
tarball="" version="" type=notify out=.build/release-artifacts
while [ $# -gt 0 ]; do
  case "$1" in
    --tarball) tarball=$2; shift 2 ;;
    --version) version=$2; shift 2 ;;
    --service-type) type=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "deb: unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
if [ -z "$tarball" ]; then
  tarball=$(ls -t .build/release-artifacts/gatehouse-*-linux-"$(uname -m)".tar.gz 2>/dev/null | head -1 || true)
  [ -n "$tarball" ] || { echo "deb: no release tarball in .build/release-artifacts; run make release first" >&2; exit 1; }
fi
case "$type" in notify | exec) ;; *) echo "deb: --service-type must be notify or exec" >&2; exit 2 ;; esac
for tool in dpkg-buildpackage dh fakeroot; do
  command -v "$tool" >/dev/null || { echo "deb: $tool is missing: apt-get install dpkg-dev debhelper fakeroot (make deb installs them)" >&2; exit 1; }
done

name=$(basename "$tarball" .tar.gz)
work=.build/deb/$name-$type${version:+-$version}
rm -rf "$work"
mkdir -p "$work/src" "$out"
tar -C "$work" -xzf "$tarball"
mv "$work/$name" "$work/src/release"
[ -n "$version" ] || version=$(cat "$work/src/release/VERSION")
cp -r packaging/debian "$work/src/debian"
cp packaging/gatehouse-admin "$work/src/gatehouse-admin"
cp -r packaging/man "$work/src/man"
if [ "$type" = exec ]; then
  # A binary from before 0.2.0: it does not say READY=1 (systemd counts it started once it runs),
  # and it refuses a newer schema with status 64.
  sed -i 's/^Type=notify$/Type=exec/; /^NotifyAccess=/d; s/^RestartPreventExitStatus=2 3 4$/RestartPreventExitStatus=2 3 4 64/' "$work/src/debian/gatehouse.service"
fi
top=$(sed -n '1s/^gatehouse (\([^)]*\)).*/\1/p' packaging/debian/changelog)
if [ "$version" != "$top" ]; then
  {
    echo "gatehouse ($version) unstable; urgency=medium"
    echo
    echo "  * Packaged from the release tarball $name."
    echo
    echo " -- Gatehouse maintainers <maintainers@users.noreply.a-seed-6ef51bce.example>  $(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")"
  } >"$work/src/debian/changelog"
fi
scripts/licences.py --debian-copyright "$work/src/release/licences/manifest.json" >"$work/src/debian/copyright"
(cd "$work/src" && dpkg-buildpackage -b -us -uc >../build.log 2>&1) || { tail -40 "$work/build.log" >&2; echo "deb: dpkg-buildpackage failed (log: $work/build.log)" >&2; exit 1; }
deb=$(ls "$work"/gatehouse_"$version"_*.deb)
cp "$deb" "$out/"
echo "deb: $out/$(basename "$deb") ($(du -h "$deb" | cut -f1))"
