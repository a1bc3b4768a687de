#!/usr/bin/env bash
# Instructions and allocations per request, which do not drift the way CPU time does on a shared machine: each
# client runs a workload under callgrind at two request counts, and the difference in instructions divided by the
# difference in requests removes start-up, warm-up and connection set-up; allocations are counted the same way by a
# malloc interposer (client process only: the server runs in a process of its own), and the CPU time of the larger
# counting run over its requests (start-up included) is a cross-check that drifts ±30% here. Prints a table with each client's
# ratio to raw AsyncHTTPClient, and with CHECK=1 fails when Bluebonnet's figures exceed
# Thresholds/per-request.json by more than 3% (repeated runs here agree within about 2%: the server shares the
# machine, and how often the client's event loops wake depends on when it answers). The table also shows what
# FoundationNetworking's `HTTPURLResponse.init` cost per request (inclusive, from the same callgrind profiles), and
# each client's ratio without it.
#
# Workloads: w1 and w2 against the test server's own 4-field head; w1-nginx and w2-nginx under the 8 fields nginx
# sends for a static file, w1-api and w2-api under a 15-field API head, each body only or, with -status, reading the
# status code and Content-Type as well (`response.response?.statusCode` for Bluebonnet, AsyncHTTPClient's own head
# for ahc).
#
# Usage: Benchmarks/instructions.sh            (every workload; W1: 300 and 600 requests; W2: 1,000 and 2,000, 64 in flight)
#        CLIENTS="bluebonnet ahc" WORKLOADS="w1" Benchmarks/instructions.sh
#        WORKLOADS="w1 w2" Benchmarks/instructions.sh   (the server's own head only: a fifth of the time)
#        CHECK=1 Benchmarks/instructions.sh    (fails on a regression past Thresholds/per-request.json)
#        BENCH=/tmp/bench-before BONNET=.build/debug/bonnet Benchmarks/instructions.sh   (a kept build, no build step)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
clients=(${CLIENTS:-bluebonnet bluebonnet-notifications ahc})
workloads=(${WORKLOADS:-w1 w2 w1-nginx w1-nginx-status w1-api w1-api-status w2-nginx w2-nginx-status w2-api w2-api-status})
port=${PORT:-18090}
work=$(mktemp -d /tmp/bluebonnet-instructions.XXXXXX)
cleanup() {
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

command -v valgrind >/dev/null 2>&1 || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq valgrind >/dev/null; }
# BENCH names a built benchmark to measure instead (a copy kept from before a change, for a before/after pair).
if [ -z "${BENCH:-}" ]; then
  echo "== building (release)" >&2
  swift build -c release --package-path "$here" --product BluebonnetBench 2>&1 | grep -E "error|Build" | tail -1 >&2
fi
# The server (`bonnet serve`) runs in a process of its own; BONNET names a built one to reuse.
if [ -z "${BONNET:-}" ]; then
  swift build -c release --package-path "$here/.." --product bonnet 2>&1 | grep -E "error|Build" | tail -1 >&2
fi
bench="${BENCH:-$(swift build -c release --package-path "$here" --show-bin-path)/BluebonnetBench}"
bonnet="${BONNET:-$(swift build -c release --package-path "$here/.." --show-bin-path)/bonnet}"
# valgrind 3.19 cannot read Swift's DWARF 5: measure a copy without debug information.
cp "$bench" "$work/bench"
objcopy --strip-debug "$work/bench"
cc -shared -fPIC -O2 -o "$work/malloc-counter.so" "$here/malloc-counter.c" -ldl

"$bonnet" serve --port "$port" >/dev/null 2>&1 &
serve_pid=$!
for _ in $(seq 50); do curl -fsS -o /dev/null "http://127.0.0.1:$port/get" 2>/dev/null && break; sleep 0.1; done

counts() {
  case "$1" in
    w1 | w1-nginx | w1-nginx-status | w1-api | w1-api-status) echo "300 600" ;;
    w2 | w2-nginx | w2-nginx-status | w2-api | w2-api-status) echo "1000 2000" ;;
    *) echo "unknown workload $1" >&2; exit 2 ;;
  esac
}

# Instructions inside FoundationNetworking's HTTPURLResponse.init(url:statusCode:httpVersion:headerFields:), callees
# included (the designated initialiser's body, which a subclass's init and the allocating init both run).
response_init() { # callgrind-file -> instructions
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    awk '/FoundationNetworking15HTTPURLResponseC3url10statusCode11httpVersion12headerFields[^ ]*tcfc / {
      gsub(",", "", $1); sum += $1 } END { printf "%d", sum }'
}

run_client() { # client workload count -> "instructions allocations cpu-microseconds response-init-instructions"
  local out="$work/callgrind.$1.$2.$3"
  if ! valgrind --tool=callgrind --callgrind-out-file="$out" "$work/bench" run --client "$1" --workload "$2" \
    --base-url "http://127.0.0.1:$port" --paths builtin --count "$3" >/dev/null 2>"$work/valgrind.log"; then
    tail -30 "$work/valgrind.log" >&2
    return 1
  fi
  local instructions
  instructions=$(grep -m1 -E '^(summary|totals):' "$out" | awk '{print $2}')
  [ -n "$instructions" ] || { echo "no instruction count in $out" >&2; return 1; }
  # The allocation-counting run, outside valgrind, also gives the CPU time (user + system), a cross-check that drifts.
  local TIMEFORMAT='%3U %3S'
  { time BLUEBONNET_MALLOC_COUNT_FILE="$work/allocations" LD_PRELOAD="$work/malloc-counter.so" "$work/bench" run \
    --client "$1" --workload "$2" --base-url "http://127.0.0.1:$port" --paths builtin --count "$3" >/dev/null ; } \
    2>"$work/cpu"
  local cpu
  cpu=$(awk '{printf "%d", ($1 + $2) * 1000000}' "$work/cpu")
  echo "$instructions $(cat "$work/allocations") $cpu $(response_init "$out")"
}

results="$work/results"
: > "$results"
for workload in "${workloads[@]}"; do
  read -r low high <<<"$(counts "$workload")"
  for client in "${clients[@]}"; do
    first=$(run_client "$client" "$workload" "$low") || exit 1
    second=$(run_client "$client" "$workload" "$high") || exit 1
    read -r i1 a1 c1 r1 <<<"$first"
    read -r i2 a2 c2 r2 <<<"$second"
    # CPU: the larger run's whole process over its requests (start-up included): a difference of two CPU times
    # is mostly noise here.
    per_request="$(( (i2 - i1) / (high - low) )) $(( (a2 - a1) / (high - low) )) $(( c2 / high ))"
    per_request="$per_request $(( (r2 - r1) / (high - low) ))"
    echo "$workload $client $per_request" >> "$results"
    read -r pi pa pc pr <<<"$per_request"
    echo "== $workload $client: $pi instructions ($pr in HTTPURLResponse.init), $pa allocations, $pc µs CPU per request" >&2
  done
done

python3 - "$results" "$here/Thresholds/per-request.json" "${CHECK:-0}" <<'PY'
import json, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
figures = {}
for workload, client, instructions, allocations, cpu, response_init in rows:
    figures.setdefault(workload, {})[client] = (int(instructions), int(allocations), int(cpu), int(response_init))
print("| workload | client | instructions / request | ×AHC | of which `HTTPURLResponse.init` | ×AHC without it | "
      "allocations / request | ×AHC | CPU µs / request | ×AHC |")
print("|---|---|---|---|---|---|---|---|---|---|")
for workload, clients in figures.items():
    base = clients.get("ahc")
    for client, (instructions, allocations, cpu, response_init) in clients.items():
        ratio = lambda value, index: f"{value / base[index]:.2f}" if base and base[index] > 0 else "-"
        without = (f"{(instructions - response_init) / (base[0] - base[3]):.2f}"
                   if base and base[0] - base[3] > 0 else "-")
        print(f"| {workload} | {client} | {instructions:,} | {ratio(instructions, 0)} | {response_init:,} | {without} | "
              f"{allocations:,} | {ratio(allocations, 1)} | {cpu:,} | {ratio(cpu, 2)} |")
if sys.argv[3] == "1":
    thresholds = json.load(open(sys.argv[2]))
    failed = False
    for workload, limits in thresholds.items():
        for client, limit in limits.items():
            measured = figures.get(workload, {}).get(client)
            if not measured: continue
            for name, value, bound in (("instructions", measured[0], limit["instructions"]), ("allocations", measured[1], limit["allocations"])):
                if value > bound * 1.03:
                    print(f"REGRESSION {workload} {client}: {value:,} {name} per request, threshold {bound:,}")
                    failed = True
    sys.exit(1 if failed else 0)
PY
