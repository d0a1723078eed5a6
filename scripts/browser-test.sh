#!/usr/bin/env bash
# The browser test of `quire serve`: builds a demo store plus a hostile record in a temporary
# folder, serves it on a free loopback port, and drives Debian's headless chromium through its
# DevTools protocol (scripts/browser-test.py): the list renders, filters and search change it,
# the detail view shows what `quire get` prints, the hostile record shows as text. Screenshots
# (PNG) are kept in the temporary folder it prints. Run by .ci/run after `swift test`.
#   scripts/browser-test.sh [path/to/quire]      (default: .build/debug/quire)
set -euo pipefail
cd "$(dirname "$0")/.."
quire="$(realpath "${1:-.build/debug/quire}")"
for tool in chromium python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "browser test skipped: $tool is not installed (scripts/install-deps.sh installs it)"
        exit 0
    fi
done
work="$(mktemp -d "${TMPDIR:-/tmp}/quire-browser-XXXXXX")"
store="$work/demo.db"
echo "== browser test in $work"
"$quire" --store "$store" demo --articles 300 --quiet >"$work/demo.out"
hostile='hostile:<script>alert(1)</script>'
printf '%s\n' "{\"id\":\"$hostile\",\"headline\":\"<script>window.__pwned=1</script><img src=x onerror=\\\"window.__pwned=2\\\"> \\u202eevil\",\"publishedAt\":\"2030-01-01T00:00:00Z\",\"section\":\"Arts\",\"byline\":\"By <b>Mallory</b>\",\"abstract\":\"</td><script>alert(1)</script>\",\"url\":\"javascript:alert(1)\",\"keywords\":[{\"name\":\"subject\",\"value\":\"<iframe src=x>\"}]}" \
    | "$quire" --store "$store" load - 2>/dev/null
"$quire" --store "$store" serve --port 0 >"$work/serve.out" 2>"$work/serve.err" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
base=""
for _ in $(seq 100); do
    base="$(grep -o 'http://127.0.0.1:[0-9]*/' "$work/serve.out" || true)"
    [ -n "$base" ] && break
    sleep 0.1
done
[ -n "$base" ] || { echo "quire serve did not start:"; cat "$work/serve.err"; exit 1; }
mkdir -p "$work/screenshots"
status=0
timeout 300 python3 scripts/browser-test.py "$base" "$quire" "$store" "$hostile" "$work/screenshots" || status=$?
kill -INT "$server"
wait "$server" || { echo "quire serve did not stop cleanly on SIGINT"; status=1; }
trap - EXIT
exit "$status"
