#!/usr/bin/env bash
# Builds the libFuzzer targets of Fuzz/ with AddressSanitizer and runs each for a bounded time.
#
#   scripts/fuzz.sh [SECONDS] [TARGET ...]   # SECONDS per target (default 60); every target by default
#
# Seeds come from Fuzz/Corpus/<target>/ (committed); what the fuzzer finds grows .build-fuzz/corpus/<target>/.
# A crash leaves .build-fuzz/crashes/<target>-crash-<sha1>, and the script exits non-zero: turn the input into a
# regression test, then add it to Fuzz/Corpus/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Every target has a seed corpus, so the corpus folders name them all.
  targets=()
  for corpus in Fuzz/Corpus/*/; do targets+=("$(basename "$corpus")"); done
fi

scratch="$PWD/.build-fuzz"
# gold warns once per AddressSanitizer runtime symbol that it cannot export; those lines say nothing about our code.
swift build --package-path Fuzz --scratch-path "$scratch" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing 2>&1 | { grep -v "Cannot export local symbol" || true; } >&2
binary="$(swift build --package-path Fuzz --scratch-path "$scratch" --show-bin-path)/BluebonnetFuzz"

status=0
mkdir -p "$scratch/crashes"
for target in "${targets[@]}"; do
  mkdir -p "$scratch/corpus/$target"
  log="$scratch/$target.log"
  if BLUEBONNET_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$scratch/crashes/$target-" \
      "$scratch/corpus/$target" "Fuzz/Corpus/$target" >"$log" 2>&1; then
    result="ok"
  else
    result="CRASH (see $log)"
    status=1
  fi
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
  corpus=$(find "$scratch/corpus/$target" -type f | wc -l)
  echo "fuzz $target: $result, $runs executions in ${seconds}s, corpus $corpus inputs"
done
exit $status
