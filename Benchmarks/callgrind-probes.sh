#!/usr/bin/env bash
# Instructions per operation of storage-bench's probes (ProbeWorkloads.swift), counted by
# callgrind inside the measured function only: repeatable on a noisy machine, so before
# and after a change compare exactly.
#
#   Benchmarks/callgrind-probes.sh [PROBE...]     (default: every probe)
#   BIN=path/to/storage-bench Benchmarks/callgrind-probes.sh   (skip the build)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${BIN:-}" ]; then
  swift build -c release --product storage-bench >/dev/null
  BIN=.build/release/storage-bench
fi
probes=("$@")
if [ ${#probes[@]} -eq 0 ]; then
  probes=(object-insert-10000 object-import-10000 object-one-row-commit object-durable-commit object-point-lookup object-range-fetch
          object-fetch-by-id object-range-prefetch object-count-bool
          object-contains-scan object-update-1000 object-delete-in object-traverse
          engine-point-lookup engine-one-row-commit batch-insert-dictionaries batch-insert-handler
          batch-update-15 batch-delete-15)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-24s %16s %12s %14s\n' probe instructions operations "per operation"
for probe in "${probes[@]}"; do
  log=$(valgrind --tool=callgrind --callgrind-out-file="$out/$probe.out" \
      --toggle-collect='*probeMeasured*' "$BIN" probe "$probe" 2>&1)
  operations=$(echo "$log" | sed -nE 's/^probe [^:]+: ([0-9]+) operations$/\1/p')
  total=$(echo "$log" | sed -nE 's/.*Collected : ([0-9]+).*/\1/p')
  if [ -z "$operations" ] || [ -z "$total" ]; then
    echo "$log" | tail -n 5; echo "callgrind-probes: $probe failed" >&2; exit 1
  fi
  printf '%-24s %16s %12s %14s\n' "$probe" "$total" "$operations" "$((total / operations))"
done
