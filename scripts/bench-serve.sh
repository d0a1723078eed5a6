#!/usr/bin/env bash
# Load figures of `quire serve` (issue 22), in one run on this machine:
#   - GET /api/articles/{id} (random ids of the store) against the same libmicrohttpd layer
#     serving a fixed body of the same size (`quire-bench serve-fixed`);
#   - a paged list request (GET /api/articles?limit=20, random pages through the cursor)
#     against a fixed body of the list's size;
#   - both again with the response cache off (`--cache-mb 0`): every answer read and rendered;
#   - the record request again while `quire load` writes new records into the same store.
# wrk with 32 concurrent keep-alive connections; requests/s, p99 latency and failed requests
# (socket errors and non-2xx answers) for each.
#   scripts/bench-serve.sh [--seconds N] [--articles N]      (release build; needs wrk)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=10
articles=5000
while (($#)); do
    case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --articles) articles="$2"; shift 2 ;;
    *) echo "usage: scripts/bench-serve.sh [--seconds N] [--articles N]" >&2; exit 64 ;;
    esac
done
command -v wrk >/dev/null || { echo "bench-serve: wrk is not installed (scripts/install-deps.sh)" >&2; exit 1; }
swift build -c release --product quire >/dev/null
swift build -c release --product quire-bench >/dev/null
bin="$(swift build -c release --show-bin-path)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quire-bench-serve-XXXXXX")"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
store="$work/store.db"
"$bin/quire" --store "$store" demo --articles "$articles" --quiet >/dev/null
"$bin/quire" --store "$store" dump >"$work/records.jsonl"

start_server() { # output file, command...: starts it (in this shell, so cleanup stops it), sets URL
    local out="$1"; shift
    : >"$out"
    "$@" >"$out" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do
        URL="$(grep -o 'http://127.0.0.1:[0-9]*/' "$out" | head -1 || true)"
        [ -n "$URL" ] && return
        sleep 0.1
    done
    echo "bench-serve: server did not start: $(cat "$out")" >&2; exit 1
}
start_server "$work/serve.out" "$bin/quire" --store "$store" serve --port 0
serve="$URL"
start_server "$work/serve-uncached.out" "$bin/quire" --store "$store" serve --port 0 --cache-mb 0
uncached="$URL"

# Paths for wrk: every article id, percent-encoded, and the cursors of the first 100 pages.
python3 - "$work" "$serve" <<'PY'
import json, sys, urllib.parse, urllib.request
work, base = sys.argv[1], sys.argv[2]
ids = [json.loads(l)["id"] for l in open(work + "/records.jsonl")]
paths = ["/api/articles/" + urllib.parse.quote(i, safe="") for i in ids]
pages, cursor = ["/api/articles?limit=20"], None
for _ in range(100):
    page = json.load(urllib.request.urlopen(base + "api/articles?limit=20" + ("&cursor=" + cursor if cursor else "")))
    cursor = page["next"]
    if not cursor: break
    pages.append("/api/articles?limit=20&cursor=" + cursor)
def lua(name, items):
    with open(f"{work}/{name}.lua", "w") as f:
        f.write("local paths = {" + ",".join(json.dumps(p) for p in items) + "}\n")
        f.write("math.randomseed(22)\nrequest = function() return wrk.format('GET', paths[math.random(#paths)]) end\n")
        f.write("done = function(summary, latency, requests)\n"
                "  io.write(string.format('QUIRE %d %d %d %d %d %.0f\\n', summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status, summary.duration, latency:percentile(99), latency:percentile(50)))\nend\n")
lua("records", paths)
lua("pages", pages)
sizes = [len(urllib.request.urlopen(base + p[1:]).read()) for p in paths[:200]]
open(work + "/record-body", "wb").write(b"x" * (sum(sizes) // len(sizes)))
page_sizes = [len(urllib.request.urlopen(base + p[1:]).read()) for p in pages]
open(work + "/page-body", "wb").write(b"x" * (sum(page_sizes) // len(page_sizes)))
PY
start_server "$work/fixed1.out" "$bin/quire-bench" serve-fixed "$work/record-body"
fixed_record="$URL"
start_server "$work/fixed2.out" "$bin/quire-bench" serve-fixed "$work/page-body"
fixed_page="$URL"

measure() { # label url [script]: prints one result line, sets REQS
    local label="$1" url="$2" script="${3:-}"
    local args=(-t2 -c32 -d"${seconds}s" --latency)
    [ -n "$script" ] && args+=(-s "$script")
    local line
    line="$(wrk "${args[@]}" "$url" | grep '^QUIRE' || true)"
    if [ -z "$line" ]; then # no script: a plain wrk run (fixed bodies)
        line="$(wrk "${args[@]}" -s "$work/plain.lua" "$url" | grep '^QUIRE')"
    fi
    read -r _ requests socket_errors status_errors duration p99 p50 <<<"$line"
    REQS=$(python3 -c "print(round($requests / ($duration / 1e6)))")
    printf '%-44s %9s req/s   p50 %6.2f ms   p99 %7.2f ms   failed %d (socket %d, non-2xx %d)\n' \
        "$label" "$REQS" "$(python3 -c "print($p50/1000)")" "$(python3 -c "print($p99/1000)")" \
        $((socket_errors + status_errors)) "$socket_errors" "$status_errors"
}
python3 - "$work" <<'PY'
import sys
open(sys.argv[1] + "/plain.lua", "w").write(open(sys.argv[1] + "/records.lua").read().split("local paths")[0] +
    "done = " + open(sys.argv[1] + "/records.lua").read().split("done = ", 1)[1])
PY

echo "quire serve load figures: $(nproc) cores, wrk -t2 -c32 -d${seconds}s, $articles+ articles, release build"
echo "record body $(wc -c <"$work/record-body") bytes, page body $(wc -c <"$work/page-body") bytes (averages)"
measure "fixed body (record size), same HTTP layer" "$fixed_record"; fixed1=$REQS
measure "GET /api/articles/{id}, random ids" "$serve" "$work/records.lua"; record=$REQS
measure "fixed body (page size), same HTTP layer" "$fixed_page"; fixed2=$REQS
measure "GET /api/articles?limit=20, random pages" "$serve" "$work/pages.lua"; page=$REQS
measure "GET /api/articles/{id}, --cache-mb 0" "$uncached" "$work/records.lua"; record_uncached=$REQS
measure "GET /api/articles?limit=20, --cache-mb 0" "$uncached" "$work/pages.lua"; page_uncached=$REQS

# A bulk load into the same store for the whole window: new ids, 5,000 records a load.
(
    i=0
    while :; do
        i=$((i + 1))
        sed "s/\"id\":\"/\"id\":\"bulk$i-/" "$work/records.jsonl" | "$bin/quire" --store "$store" load - --quiet 2>/dev/null || true
    done
) &
loader=$!
pids+=("$loader")
before="$(python3 -c "import json,urllib.request; print(next(c['records'] for c in json.load(urllib.request.urlopen('${serve}api/stats'))['collections'] if c['name']=='articles'))")"
measure "GET /api/articles/{id} during a bulk load" "$serve" "$work/records.lua"; during=$REQS
measure "GET /api/articles?limit=20 during a bulk load" "$serve" "$work/pages.lua"; during_page=$REQS
kill "$loader" 2>/dev/null || true
after="$(python3 -c "import json,urllib.request; print(next(c['records'] for c in json.load(urllib.request.urlopen('${serve}api/stats'))['collections'] if c['name']=='articles'))")"
echo "records written by the bulk load meanwhile: $((after - before))"
python3 - "$record" "$fixed1" "$page" "$fixed2" "$during" "$during_page" "$record_uncached" "$page_uncached" <<'PY'
import sys
r, f1, p, f2, d, dp, ru, pu = map(float, sys.argv[1:])
print(f"ratio record / fixed body: {r / f1:.2f} (wanted >= 0.5); without the response cache {ru / f1:.2f}")
print(f"ratio page / fixed body:   {p / f2:.2f} (wanted >= 0.3); without the response cache {pu / f2:.2f}")
print(f"record during the load / without: {d / r:.2f}; page during the load / without: {dp / p:.2f}")
PY
