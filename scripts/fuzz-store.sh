#!/usr/bin/env bash
# Damaged-store fuzzing: writes random bytes into copies of a demo store and runs the read and
# write commands on each copy. Every command must finish with a clear error or a result: a crash
# (a signal), a hang (60 s) or an exit status other than 0, 1 and 64 is reported, and the script
# then exits 1. Usage: scripts/fuzz-store.sh [QUIRE] [FIRST_SEED] [LAST_SEED] [BYTES]
# (defaults: .build/release/quire, seeds 1-50, 200 bytes a copy). Needs python3.
set -uo pipefail
quire=$(realpath "${1:-.build/release/quire}")
first=${2:-1}
last=${3:-50}
bytes=${4:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$quire" --store demo demo > /dev/null 2>&1 || { echo "fuzz-store: the demo failed" >&2; exit 1; }
id=$("$quire" --store demo dump --limit 1 | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["id"])')
"$quire" --store demo dump --limit 50 > reload.jsonl
commands=(
    "verify" "stats" "dump" "get $id" "rejects"
    "search the --limit 20" "search '\"the world\"' --limit 20" "search 'wor*' --limit 20"
    "search 'the OR a -of' --limit 20 --sort newest" "search 'section:Science the' --limit 20"
    "copy --compact copy" "load reload.jsonl" "verify"
)
failures=0
for seed in $(seq "$first" "$last"); do
    rm -rf store copy
    cp -r demo store
    python3 - "$seed" "$bytes" <<'PY'
import os, random, sys
r = random.Random(int(sys.argv[1]))
size = os.path.getsize("store/data.mdb")
with open("store/data.mdb", "r+b") as f:
    for _ in range(int(sys.argv[2])):
        f.seek(r.randrange(8192, size))  # past the meta pages: their damage is checked at open
        f.write(bytes([r.randrange(256)]))
PY
    for command in "${commands[@]}"; do
        eval "timeout 60 \"$quire\" --store store $command" > out.txt 2>&1
        status=$?
        if [ $status -ne 0 ] && [ $status -ne 1 ] && [ $status -ne 64 ]; then
            echo "seed $seed: quire $command: exit $status: $(grep -m1 -E 'runtime failure|Fatal|crashed' out.txt)"
            failures=$((failures + 1))
        fi
    done
done
echo "fuzz-store: seeds $first-$last, $bytes bytes each: $failures failure(s)"
[ $failures -eq 0 ]
