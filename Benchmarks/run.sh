#!/usr/bin/env bash
# Runs every client on every workload, interleaved, each run a fresh process, and prints one table with each
# client's ratio to raw AsyncHTTPClient computed per repetition. Usage: Benchmarks/run.sh [repetitions]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repetitions=${1:-5}
port=18089
work=$(mktemp -d /tmp/bluebonnet-bench.XXXXXX)
chmod 755 "$work"   # nginx's worker runs unprivileged and must read the documents
results="$work/results.jsonl"
clients=(bluebonnet bluebonnet-handler bluebonnet-notifications ahc ahc-delegate urlsession)
# W5 (upload) runs after these; W5=0 skips it. Also: w1-nginx, w1-api, w2-nginx, w2-api, each with -status (what
# instructions.sh measures): on nginx, /small.json has nginx's own head and /api/small.json a 15-field one.
workloads=(${WORKLOADS:-w1 w2 w2-raised w3 w4})
cleanup() {
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  [ -n "${serve_pid:-}" ] && kill "$serve_pid" 2>/dev/null || true
  [ -n "${drain_pid:-}" ] && kill "$drain_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== building (release)"
swift build -c release --package-path "$here" --product BluebonnetBench 2>&1 | grep -E "error|Compiling|Build" | tail -1
bench="$(swift build -c release --package-path "$here" --show-bin-path)/BluebonnetBench"

paths=nginx
if ! command -v nginx >/dev/null 2>&1; then
  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq nginx-light >/dev/null 2>&1 || apt-get install -y -qq nginx >/dev/null 2>&1) || true
fi
command -v wrk >/dev/null 2>&1 || (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null 2>&1) || true
if command -v nginx >/dev/null 2>&1; then
  mkdir -p "$work/www"
  "$bench" generate "$work/www"
  chmod 755 "$work/www"
  head -c $((256 * 1024 * 1024)) /dev/urandom > "$work/www/big.bin"
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp; uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  types { application/json json; application/octet-stream bin; }
  server {
    listen 127.0.0.1:$port; root $work/www;
    # The w*-api workloads: the same file under a 15-field head, nginx's 8 and 7 an API adds (as the test server's
    # /json-array/10?head=api sends it).
    location /api/ {
      alias $work/www/;
      add_header Cache-Control "private, max-age=0, must-revalidate";
      add_header Vary "Accept-Encoding, Origin";
      add_header X-Request-Id \$request_id;
      add_header Strict-Transport-Security "max-age=31536000; includeSubDomains";
      add_header X-Content-Type-Options nosniff;
      add_header X-Frame-Options DENY;
      add_header Access-Control-Allow-Origin "*";
    }
  }
}
CONF
  mkdir -p "$work/tmp"
  chmod 644 "$work/www"/*
  nginx -c "$work/nginx.conf"
  curl -fsS -o /dev/null "http://127.0.0.1:$port/small.json" || { echo "nginx does not serve the documents" >&2; exit 1; }
  echo "== server: nginx $(nginx -v 2>&1 | sed 's/.*\///') on 127.0.0.1:$port, 1 worker"
else
  paths=builtin
  swift run -c release --package-path "$here/.." bonnet serve --port $port >/dev/null 2>&1 &
  serve_pid=$!
  echo "== server: bonnet serve (nginx could not be installed)"
fi
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.2; done

if command -v wrk >/dev/null 2>&1 && [ "$paths" = nginx ]; then
  echo "== loopback limit (wrk, 5 s each)"
  echo "   small.json, 1 connection:   $(wrk -t1 -c1 -d5s http://127.0.0.1:$port/small.json | awk '/Requests\/sec/ {print $2}') req/s"
  echo "   small.json, 64 connections: $(wrk -t1 -c64 -d5s http://127.0.0.1:$port/small.json | awk '/Requests\/sec/ {print $2}') req/s"
fi

echo "== machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
for workload in "${workloads[@]}"; do
  for rep in $(seq "$repetitions"); do
    # Rotate the order every repetition (A B C D, B C D A, ...) so no client always runs first or last.
    for offset in $(seq 0 $((${#clients[@]} - 1))); do
      client=${clients[$(( (offset + rep - 1) % ${#clients[@]} ))]}
      line=$("$bench" run --client "$client" --workload "$workload" --base-url "http://127.0.0.1:$port" --paths "$paths")
      echo "{\"rep\": $rep, \"result\": $line}" >> "$results"
    done
  done
  echo "   $workload done"
done

python3 "$here/report.py" "$results"

# W4b: the 256 MiB body downloaded to a file, Bluebonnet against AsyncHTTPClient's FileDownloadDelegate, each run a
# process of its own (alternating), so peak RSS is the client's alone.
if [ "${W4B:-1}" != 0 ]; then
  echo
  w4b_path=${W4B_PATH:-$([ "$paths" = nginx ] && echo /big.bin || echo "/bytes/268435456?seed=1")}
  echo "== W4b: 256 MiB to a file, Bluebonnet vs AsyncHTTPClient's FileDownloadDelegate, peak RSS per process"
  for rep in $(seq "$repetitions"); do
    for client in bluebonnet ahc-file; do
      "$bench" download --client "$client" --url "http://127.0.0.1:$port$w4b_path" --directory "$work" >> "$work/w4b.jsonl"
    done
  done
  python3 - "$work/w4b.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
rates = {}
for client in ("bluebonnet", "ahc-file"):
    mine = [row for row in rows if row["client"] == client]
    rss = max(row["peakRSSKiB"] for row in mine) / 1024
    rate = statistics.median(row["bytes"] / row["wallSeconds"] / 1024 / 1024 for row in mine)
    cpu = statistics.median(row["cpuUserSeconds"] + row["cpuSystemSeconds"] for row in mine)
    rates[client] = rate
    print(f"   {client:12} median {rate:7.1f} MiB/s, median CPU {cpu:5.2f} s, peak RSS {rss:5.1f} MiB (max of {len(mine)})")
ratio = rates["bluebonnet"] / rates["ahc-file"]
bb_rss = max(row["peakRSSKiB"] for row in rows if row["client"] == "bluebonnet") / 1024
print(f"   throughput bluebonnet/ahc-file {ratio:.2f}x (target >= 0.9: {'met' if ratio >= 0.9 else 'NOT MET'}); "
      f"peak RSS {bb_rss:.1f} MiB (target <= 32: {'met' if bb_rss <= 32 else 'NOT MET'})")
PY
  # W4c: 1 GiB streamed to a consumer that sleeps 1 ms per chunk; only back-pressure keeps memory bounded.
  if [ "$paths" = nginx ]; then
    head -c $((1024 * 1024 * 1024)) /dev/zero > "$work/www/huge.bin"
    chmod 644 "$work/www/huge.bin"
    line=$("$bench" download --client bluebonnet-slow-stream --url "http://127.0.0.1:$port/huge.bin" --directory "$work")
    rm -f "$work/www/huge.bin"
    python3 - "$line" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
rss = r["peakRSSKiB"] / 1024
print(f"== W4c: 1 GiB to a slow stream consumer in {r['wallSeconds']:.1f} s, peak RSS {rss:.1f} MiB (target <= 64: {'met' if rss <= 64 else 'NOT MET'})")
PY
  fi
fi

# W5: a 1 GiB file uploaded to the test server's /drain in a process of its own, so only the client's memory counts.
if [ "${W5:-1}" != 0 ]; then
  echo
  echo "== W5: 1 GiB upload to /drain (bonnet's test server in its own process), peak RSS of the uploading process"
  head -c $((1024 * 1024 * 1024)) /dev/urandom > "$work/upload.bin"
  drain_port=$((port + 1))
  "$bench" drain-server --port "$drain_port" >/dev/null 2>&1 &
  drain_pid=$!
  for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$drain_port) 2>/dev/null && break; sleep 0.2; done
  for rep in $(seq "$repetitions"); do
    for mode in file multipart; do
      "$bench" upload --mode "$mode" --file "$work/upload.bin" --base-url "http://127.0.0.1:$drain_port" >> "$work/w5.jsonl"
    done
  done
  python3 - "$work/w5.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
for client in sorted({row["client"] for row in rows}):
    mine = [row for row in rows if row["client"] == client]
    rss = max(row["peakRSSKiB"] for row in mine) / 1024
    wall = statistics.median(row["wallSeconds"] for row in mine)
    verdict = "met" if rss < 64 else "NOT MET"
    print(f"   {client:22} peak RSS {rss:5.1f} MiB (max of {len(mine)}), median wall {wall:5.2f} s, target < 64 MiB: {verdict}")
PY
  kill "$drain_pid" 2>/dev/null || true
  drain_pid=
fi

echo
echo "== allocations per request (package-benchmark), checked against Thresholds/"
(cd "$here" && swift package benchmark thresholds check --target Allocations --no-progress 2>&1 | grep -E "EQUAL|BETTER|WORSE|regress|Could not|thresholds" )
