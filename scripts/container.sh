#!/usr/bin/env bash
# `make container`: the container image localhost/gatehouse:VERSION, built with podman from the
# release tarball (`make release`) and packaging/container/Containerfile.
# BASE names the Debian bookworm base image; without it one is made with debootstrap from Debian's
# mirror (localhost/gatehouse-base:bookworm), for machines that reach no image registry.
# PODMAN overrides the podman command line (the default suits a root podman on a VM whose cgroups
# are mixed v1/v2: runc, cgroupfs, vfs storage).
set -euo pipefail
cd "$(dirname "$0")/.."
podman=${PODMAN:-podman --storage-driver vfs --runtime runc --cgroup-manager cgroupfs}
tarball=$(ls -t .build/release-artifacts/gatehouse-*-linux-"$(uname -m)".tar.gz 2>/dev/null | head -1 || true)
[ -n "$tarball" ] || { echo "container: no release tarball in .build/release-artifacts; run make release first" >&2; exit 1; }
version=$(tar -xzOf "$tarball" "$(basename "$tarball" .tar.gz)/VERSION")
work=.build/container
mkdir -p "$work"

base=${BASE:-}
if [ -z "$base" ]; then
  base=localhost/gatehouse-base:bookworm
  if ! $podman image exists "$base"; then
    echo "container: making the base image $base with debootstrap"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    tar -C "$work/rootfs" -c . | $podman import --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
    rm -rf "$work/rootfs"
  fi
fi

context="$work/context"
rm -rf "$context"
mkdir -p "$context"
cp "$tarball" "$context/gatehouse-release.tar.gz"
cp packaging/container/gatehouse.yaml "$context/gatehouse.yaml"
# --layers=false keeps no cached stage images: with vfs storage each is a full copy of the root
# file system, and a build machine would fill its disk in a few dozen builds.
$podman build --format docker --isolation chroot --network host --layers=false -f packaging/container/Containerfile --build-arg BASE="$base" \
  -t "localhost/gatehouse:$version" "$context" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; echo "container: podman build failed (log: $work/build.log)" >&2; exit 1; }
# The image this tag named before, now untagged, is dropped for the same reason.
$podman image prune -f >/dev/null 2>&1 || true
echo "container: localhost/gatehouse:$version ($($podman image inspect --format '{{.Size}}' "localhost/gatehouse:$version" | awk '{printf "%.0f MB", $1/1e6}'))"
