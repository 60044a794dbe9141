#!/usr/bin/env bash
# Runs the whole `swift test` RUNS times in a row (default 5) with a CPU hog (stress-ng, one worker
# per core) running beside it, and stops at the first failure: the proof that the unit suite does
# not depend on an idle machine (its peers are probed before use, their timeouts leave room, the
# time that matters comes from the injected clock). Used by `make unit-under-load`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
mkdir -p .build/test-logs
stress-ng --cpu "$(nproc)" --timeout 4h >/dev/null 2>&1 &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs), $(nproc) cores, stress-ng --cpu $(nproc) beside the tests"
for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  if swift test --skip-build >".build/test-logs/unit-under-load-$run.log" 2>&1; then
    echo "run $run of $runs: passed in $(( $(date +%s) - started )) s"
  else
    echo "run $run of $runs: FAILED after $(( $(date +%s) - started )) s"
    grep -E "✘|recorded an issue" ".build/test-logs/unit-under-load-$run.log" | head -20
    exit 1
  fi
done
