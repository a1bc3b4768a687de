#!/usr/bin/env bash
# Starts or stops Python's httpbin under gunicorn on 127.0.0.1, the independent peer of the interop tests.
#
#   scripts/httpbin.sh start   # installs httpbin and gunicorn into .build/httpbin-venv, prints the base URL
#   scripts/httpbin.sh stop
#
# Then: BLUEBONNET_HTTPBIN_URL=<url> swift test --skip-build --disable-swift-testing --filter HTTPBinInteropTests
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.build/httpbin-venv
pidfile=.build/httpbin.pid
logfile=.build/httpbin.log

case "${1:-}" in
start)
  mkdir -p .build
  # The same environment carries Python's websockets, the WebSocket interop tests' independent peer
  # (BLUEBONNET_WEBSOCKETS_PYTHON=.build/httpbin-venv/bin/python), and httpie, the CLI tests' oracle for session files
  # (BLUEBONNET_HTTPIE=.build/httpbin-venv/bin/http).
  if [ ! -x "$venv/bin/gunicorn" ] || [ ! -x "$venv/bin/http" ] \
    || ! "$venv/bin/python" -c "import websockets.asyncio.server" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "httpbin==0.10.4" "gunicorn>=23,<28" \
      "websockets>=13,<18" "httpie==3.2.4" >&2
  fi
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$venv/bin/gunicorn" --bind "127.0.0.1:$port" --workers 2 --daemon --pid "$pidfile" \
    --error-logfile "$logfile" httpbin:app
  url="http://127.0.0.1:$port"
  # Ready when /get answers; give up after 30 s.
  python3 - "$url" <<'PY' >&2
import sys, time, urllib.request
for _ in range(300):
    try:
        urllib.request.urlopen(sys.argv[1] + "/get", timeout=1).read()
        sys.exit(0)
    except Exception:
        time.sleep(0.1)
sys.exit("httpbin did not start; see .build/httpbin.log")
PY
  echo "$url"
  ;;
stop)
  if [ -f "$pidfile" ]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  fi
  ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
