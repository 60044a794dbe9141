#!/usr/bin/env bash
# The plugin kit's API discipline (`make kit-check`, the first stage of `make test`):
#   1. scripts/kit-figures.py --check: the kit's figures, failing on a kit type no plugin uses;
#   2. scripts/capability-check.py: a capability's method is written only with its protocol adopted;
#   2b. scripts/guide-code.py: the guide's code blocks are the compiled files of Tests/GuideExamples;
#   3. swift format lint --strict with .swift-format: the sources are formatted (`make format` fixes it);
#   4. the API of the GatehousePluginKit product against the last `kit-v*` tag
#      (`swift package diagnose-api-breaking-changes`), failing on a breakage that the unreleased
#      section of docs/kit-changelog.md does not list in its fenced `breakage` block.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "--- kit figures"
scripts/kit-figures.py --check

echo "--- capabilities adopted where they are implemented"
scripts/capability-check.py

echo "--- the guide's code (docs/writing-a-plugin.md = Tests/GuideExamples)"
scripts/guide-code.py

echo "--- formatting (.swift-format)"
if ! swift format lint --strict -r Sources Plugins Tests Package.swift --configuration .swift-format; then
  echo "The sources are not formatted: run 'make format' and commit the result." >&2
  exit 1
fi
echo "formatted"

echo "--- API breakage of GatehousePluginKit"
baseline=$(git tag --list 'kit-v*' --sort=-v:refname | head -1)
if [ -z "$baseline" ]; then
  # No kit release yet: the first one is tagged kit-v1.0.0 when the kit's 1.0 issue lands, and every
  # change after it is compared with it. Until then the kit changes freely (docs/kit-changelog.md).
  echo "no kit release is tagged yet (kit-v*): nothing to compare with"
  exit 0
fi
allowlist=$(mktemp)
trap 'rm -f "$allowlist"' EXIT
# The lines of the first ```breakage block: breakages made on purpose since the last release.
awk '/^```breakage/{inside=1; next} inside && /^```/{exit} inside && NF {print}' docs/kit-changelog.md >"$allowlist"
echo "comparing with $baseline ($(wc -l <"$allowlist") breakages listed in docs/kit-changelog.md)"
swift package diagnose-api-breaking-changes "$baseline" --products GatehousePluginKit --breakage-allowlist-path "$allowlist" \
  --baseline-dir .build/kit-baseline
