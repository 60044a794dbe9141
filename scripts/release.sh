#!/usr/bin/env bash
# `make release`: the gatehouse binary with the Swift runtime linked in (it needs only Debian's own
# libraries), and a tarball with it, the production config, the docs and the licences of what it links:
#   .build/release-artifacts/gatehouse-VERSION-linux-ARCH.tar.gz
# RELEASE_SCRATCH (default .build-release) is the build folder, RELEASE_OUT where the tarball goes,
# RELEASE_SOURCE the tree to build (default this one; the package tests build an older commit with
# this tree's packaging).
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
scratch=${RELEASE_SCRATCH:-.build-release}
out=${RELEASE_OUT:-.build/release-artifacts}
source=${RELEASE_SOURCE:-.}
version=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$source/Sources/gatehouse/GatehouseCommand.swift")
[ -n "$version" ] || { echo "release: cannot read the version from $source/Sources/gatehouse/GatehouseCommand.swift" >&2; exit 1; }
arch=$(uname -m)
name=gatehouse-$version-linux-$arch

echo "release: building gatehouse $version (release, Swift runtime static) in $scratch"
"$swift" build -c release --static-swift-stdlib --product gatehouse --package-path "$source" --scratch-path "$scratch"
binary="$scratch/release/gatehouse"

# The binary must run where no Swift toolchain is: no Swift library may be linked dynamically.
if ldd "$binary" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift|not found'; then
  echo "release: $binary still links the Swift runtime dynamically (above)" >&2
  exit 1
fi

stage="$out/$name"
rm -rf "$stage" "$out/$name.tar.gz"
mkdir -p "$stage/bin" "$stage/etc" "$stage/doc" "$stage/licences"
# Stripped: the symbols are a third of the size and not needed to run (a crash report still
# names the functions through Swift's own metadata).
strip --strip-unneeded -o "$stage/bin/gatehouse" "$binary"
cp packaging/gatehouse.yaml "$stage/etc/gatehouse.yaml"
cp "$source/config/gatehouse.yaml" "$stage/etc/gatehouse.development.yaml"
cp "$source/README.md" "$stage/doc/README.md"
cp -r "$source/docs/." "$stage/doc/"
scripts/licences.py --package-root "$source" --checkouts "$scratch/checkouts" --swift-licence "$(dirname "$(readlink -f "$(command -v "$swift")")")/../share/swift/LICENSE.txt" \
  --binary "$binary" --out "$stage/licences"
echo "$version" > "$stage/VERSION"
tar -C "$out" --owner=0 --group=0 --numeric-owner --sort=name -czf "$out/$name.tar.gz" "$name"
echo "release: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1); binary $(du -h "$stage/bin/gatehouse" | cut -f1))"
