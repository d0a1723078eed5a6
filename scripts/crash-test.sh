#!/usr/bin/env bash
# The long crash-safety run: kills `quire fetch nyt` and `quire load` with SIGKILL at random
# instants for ROUNDS rounds (default 200), verifying the store after every kill, then checks that
# resumed runs end identical to uninterrupted ones. See docs/RELIABILITY.md.
#
#   scripts/crash-test.sh [--release] [--seed N] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."

configuration=debug
rounds=200
seed=2026
while [ $# -gt 0 ]; do
    case "$1" in
        --release) configuration=release ;;
        --seed) seed="$2"; shift ;;
        -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
        *) rounds="$1" ;;
    esac
    shift
done

log=$(mktemp -t quire-crash.XXXXXX)
echo "crash-test: building ($configuration)" >&2
swift build -c "$configuration" --product quire >&2
binary="$(swift build -c "$configuration" --show-bin-path)/quire"

echo "crash-test: $rounds rounds, seed $seed (log: $log)" >&2
start=$(date +%s)
status=0
QUIRE_CRASH_ROUNDS="$rounds" QUIRE_CRASH_SEED="$seed" QUIRE_BINARY="$binary" \
    swift test --filter LongCrashTests >"$log" 2>&1 || status=$?
seconds=$(( $(date +%s) - start ))

summary=$(grep -o 'LongCrashTests: rounds=.*' "$log" | tail -1 || true)
echo "crash-test: ${summary:-no summary (see $log)} duration=${seconds}s binary=$configuration"
grep 'LongCrashTests finding:' "$log" || true
if [ "$status" -ne 0 ]; then
    echo "crash-test: FAILED (exit $status); tail of $log:" >&2
    tail -40 "$log" >&2
    exit 1
fi
echo "crash-test: passed"
