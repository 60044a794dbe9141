#!/usr/bin/env bash
# Runs `make test`'s stages one after another, timing each, and prints every stage's time at the
# end (also when a stage fails: the run stops there, as make would). CI's log tail shows the table.
set -uo pipefail
cd "$(dirname "$0")/.."
stages=("$@")
names=() seconds=()
status=0 failed=""
start_all=$(date +%s)
for stage in "${stages[@]}"; do
  start=$(date +%s)
  make --no-print-directory "$stage"
  status=$?
  names+=("$stage") seconds+=($(( $(date +%s) - start )))
  if [ $status -ne 0 ]; then failed=$stage; break; fi
done
total=$(( $(date +%s) - start_all ))
echo
echo "--- make test: time per stage ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))"
for i in "${!names[@]}"; do
  printf '%-14s %5d s  %s\n' "${names[$i]}" "${seconds[$i]}" "$([ "${names[$i]}" = "$failed" ] && echo FAILED)"
done
printf '%-14s %5d s  (%d min %02d s; CI allows 90 min, the goal is under 45)\n' total "$total" $((total / 60)) $((total % 60))
if [ -n "$failed" ]; then echo "make test stopped at '$failed' (exit status $status)"; fi
exit $status
