#!/usr/bin/env bash
# W6: 10,000 small GETs, 64 in flight, over HTTPS to nginx offering HTTP/2, each client trusting a self-signed
# certificate, each run a process of its own; nginx's access log tells which protocol and how many connections each
# run used. Usage: Benchmarks/h2.sh [repetitions]; CLIENTS="bluebonnet ahc" by default.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repetitions=${1:-3}
clients=(${CLIENTS:-bluebonnet ahc})
port=${PORT:-18443}
work=$(mktemp -d /tmp/bluebonnet-h2.XXXXXX)
chmod 755 "$work"
cleanup() {
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

swift build -c release --package-path "$here" --product BluebonnetBench 2>&1 | grep -E "error|Build" | tail -1
bench="$(swift build -c release --package-path "$here" --show-bin-path)/BluebonnetBench"
command -v nginx >/dev/null 2>&1 || (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null 2>&1)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 -subj "/CN=localhost" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
mkdir -p "$work/www" "$work/tmp"
"$bench" generate "$work/www"
chmod 755 "$work/www"
chmod 644 "$work/www"/*
# nginx 1.22 (Debian 12) spells HTTP/2 as `listen ... http2`; 1.25.1 and later also take `http2 on`. Its default of
# 128 concurrent streams a connection holds the 64 in flight.
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
  log_format proto '\$server_protocol \$connection';
  access_log $work/access.log proto;
  sendfile on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp; uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  types { application/json json; }
  server {
    listen 127.0.0.1:$port ssl http2;
    ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
    root $work/www;
  }
}
CONF
nginx -c "$work/nginx.conf"
sleep 0.5
echo "== W6: nginx $(nginx -v 2>&1 | sed 's/.*\///'), TLS and HTTP/2, 10,000 GETs of small.json, 64 in flight;" \
  "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
touch "$work/access.log"
for rep in $(seq "$repetitions"); do
  for offset in $(seq 0 $((${#clients[@]} - 1))); do
    client=${clients[$(( (offset + rep - 1) % ${#clients[@]} ))]}
    before=$(wc -l < "$work/access.log")
    line=$("$bench" h2 --client "$client" --url "https://127.0.0.1:$port/small.json" --ca "$work/cert.pem")
    sleep 0.3   # nginx writes its log lines as each request ends; let it catch up
    protocols=$(tail -n +$((before + 1)) "$work/access.log" \
      | awk '{p[$1]++; c[$2]++} END {for (k in p) printf "%s %d, ", k, p[k]; printf "%d connections", length(c)}')
    echo "{\"run\": $line, \"server\": \"$protocols\"}" | tee -a "$work/w6.jsonl"
  done
done
python3 - "$work/w6.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def cell(values, fmt):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"
print("| client | runs | wall s | req/s | CPU s | CPU µs / request | peak RSS MiB | what nginx saw (each run) |")
print("|---|---|---|---|---|---|---|---|")
for client in dict.fromkeys(row["run"]["client"] for row in rows):
    mine = [row for row in rows if row["run"]["client"] == client]
    runs = [row["run"] for row in mine]
    cpu = [r["cpuUserSeconds"] + r["cpuSystemSeconds"] for r in runs]
    print(f"| {client} | {len(runs)} | {cell([r['wallSeconds'] for r in runs], '{:.2f}')} "
          f"| {cell([r['requests'] / r['wallSeconds'] for r in runs], '{:,.0f}')} | {cell(cpu, '{:.2f}')} "
          f"| {cell([c / r['requests'] * 1e6 for c, r in zip(cpu, runs)], '{:.0f}')} "
          f"| {cell([r['peakRSSKiB'] / 1024 for r in runs], '{:.1f}')} | {'; '.join(sorted(set(row['server'] for row in mine)))} |")
PY
