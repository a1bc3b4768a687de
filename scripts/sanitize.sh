#!/usr/bin/env bash
# Builds the test suite with a sanitizer, in a build folder of its own, and runs it.
#
#   scripts/sanitize.sh thread  [XCTEST FILTER]   # ThreadSanitizer: data races
#   scripts/sanitize.sh address [XCTEST FILTER]   # AddressSanitizer: memory errors
#
# A report fails the run (the sanitizers exit non-zero when they reported anything).
set -euo pipefail
cd "$(dirname "$0")/.."

kind="${1:?usage: $0 thread|address [filter]}"
filter="${2:-}"
case "$kind" in
thread | address) ;;
*) echo "usage: $0 thread|address [filter]" >&2; exit 2 ;;
esac

scratch="$PWD/.build-$kind-sanitizer"
export BLUEBONNET_SANITIZER="$kind"   # tests that bound resident memory allow for the sanitizer's own (ResidentMemorySampler)
# Protected takes a pthread mutex in these builds, which the sanitizers see (see Protected.swift).
flags=(-Xswiftc -DBLUEBONNET_SANITIZER_LOCK)
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" "${flags[@]}" >&2
# halt_on_error: the first race or memory error stops the run with its report, rather than scrolling past.
# The suppressions file silences one known false positive in NIO; it says which and why.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 ${ASAN_OPTIONS:-}"
args=(--skip-build --sanitize="$kind" --scratch-path "$scratch" --disable-swift-testing "${flags[@]}")
if [ -n "$filter" ]; then args+=(--filter "$filter"); fi
swift test "${args[@]}"
