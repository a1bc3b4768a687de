#!/usr/bin/env bash
# W7: REQUESTS requests (10,000 by default) started at once against a server that never answers, each client in a
# process of its own against a fresh hang-server (a fresh port each run, so no run meets the last one's TIME_WAIT
# sockets). Prints memory per in-flight request and how long after its deadline each request ended.
# Usage: Benchmarks/scale.sh [repetitions]; CLIENTS="bluebonnet ahc urlsession" REQUESTS=1000 TIMEOUT=10 to change.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repetitions=${1:-3}
clients=(${CLIENTS:-bluebonnet ahc})
requests=${REQUESTS:-10000}
timeout=${TIMEOUT:-10}
port=${PORT:-18200}
results=$(mktemp /tmp/bluebonnet-w7.XXXXXX.jsonl)
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT

swift build -c release --package-path "$here" --product BluebonnetBench 2>&1 | grep -E "error|Build" | tail -1
bench="$(swift build -c release --package-path "$here" --show-bin-path)/BluebonnetBench"
# Each run holds REQUESTS sockets in the client and as many in the server.
ulimit -n $((requests * 2 + 1000)) 2>/dev/null || true
echo "== W7: $requests requests at once, deadline $timeout s, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(date -u +%Y-%m-%dT%H:%MZ)"
for rep in $(seq "$repetitions"); do
  for offset in $(seq 0 $((${#clients[@]} - 1))); do
    client=${clients[$(( (offset + rep - 1) % ${#clients[@]} ))]}
    port=$((port + 1))
    "$bench" hang-server --port "$port" >/dev/null 2>&1 &
    server_pid=$!
    for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
    "$bench" flood --client "$client" --base-url "http://127.0.0.1:$port" --requests "$requests" --timeout "$timeout" \
      | tee -a "$results"
    kill "$server_pid"
    wait "$server_pid" 2>/dev/null || true
    server_pid=
    sleep 2
  done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def cell(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"
print("| client | runs | KiB / in-flight request | peak RSS MiB | held at once (server) | lateness p50 ms | p99 ms | max ms | CPU s | outcomes |")
print("|---|---|---|---|---|---|---|---|---|---|")
for client in dict.fromkeys(row["client"] for row in rows):
    mine = [row for row in rows if row["client"] == client]
    outcomes = {}
    for row in mine:
        for key, count in row["outcomes"].items():
            outcomes[key] = outcomes.get(key, 0) + count
    print(f"| {client} | {len(mine)} | {cell([r['kibPerRequest'] for r in mine], '{:.1f}')} "
          f"| {cell([r['peakRSSKiB'] / 1024 for r in mine], '{:.0f}')} "
          f"| {cell([r['serverPeakHeld'] for r in mine], '{:.0f}')} "
          f"| {cell([r['latenessP50'] * 1000 for r in mine], '{:,.0f}')} "
          f"| {cell([r['latenessP99'] * 1000 for r in mine], '{:,.0f}')} "
          f"| {cell([r['latenessMax'] * 1000 for r in mine], '{:,.0f}')} | {cell([r['cpuSeconds'] for r in mine], '{:.1f}')} "
          f"| {', '.join(f'{k} {v}' for k, v in sorted(outcomes.items()))} |")
PY
rm -f "$results"
