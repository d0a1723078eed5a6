#!/usr/bin/env bash
# Runs the store and LMDB suites under Thread Sanitizer and Address Sanitizer, each in its own
# scratch path so it never fights the normal debug build. Several minutes each on 2 cores.
#
#   scripts/sanitizers.sh [thread|address]...   (default: both; QUIRE_DETECT_LEAKS=1 adds LeakSanitizer)
set -uo pipefail
cd "$(dirname "$0")/.."

filter='QuireLMDBTests|QuireTests'
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(thread address)
failed=0
for kind in "${kinds[@]}"; do
    log="/tmp/quire-san-$kind.log"
    start=$(date +%s)
    # Leak checking is off unless asked for: XCTest and Foundation's Process leak at exit.
    ASAN_OPTIONS="detect_leaks=${QUIRE_DETECT_LEAKS:-0}" swift test --sanitize="$kind" --scratch-path "/tmp/san-$kind" --filter "$filter" >"$log" 2>&1
    status=$?
    seconds=$(( $(date +%s) - start ))
    tests=$(grep -o 'Test run with [0-9]* tests.*' "$log" | tail -1)
    reports=$(grep -c '^WARNING: ThreadSanitizer\|^==[0-9]*==ERROR: AddressSanitizer' "$log")
    echo "sanitizers: $kind: exit $status, ${seconds}s, ${tests:-no test summary}, $reports report(s) (log: $log)"
    grep '^SUMMARY: ' "$log" | sort | uniq -c
    [ "$status" -ne 0 ] || [ "$reports" -ne 0 ] && failed=1
done
exit $failed
