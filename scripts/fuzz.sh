#!/usr/bin/env bash
# Long fuzzing runs with libFuzzer + AddressSanitizer (see docs/RELIABILITY.md).
#
#   scripts/fuzz.sh codec|nyt|text [SECONDS] [-- LIBFUZZER-OPTIONS...]
#
# Builds the harness in Fuzz/ against the module sources with `swiftc -sanitize=fuzzer,address`
# (the library module instrumented too), seeds a corpus from generated records, runs for SECONDS
# (default 60) and reports. Crashing inputs land in .build/fuzz/TARGET/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-}"
seconds="${2:-60}"
shift $(( $# >= 2 ? 2 : $# ))
[ "${1:-}" = "--" ] && shift
extra=("$@")

case "$target" in
    codec) module=QuireCodec; sources=(Sources/QuireCodec/*.swift); harness=(Fuzz/CodecFuzz.swift)
           cflags=(-Xcc -fmodule-map-file=Sources/CZstd/module.modulemap -Xcc -fmodule-map-file=Sources/CChecksum/module.modulemap); libs=(-lzstd) ;;
    nyt)   module=QuireNews; sources=($(find Sources/QuireNews -name '*.swift' | sort))
           harness=(Fuzz/NYTFuzz.swift Sources/QuireFixtures/Generator/*.swift); cflags=(); libs=() ;;
    text)  module=QuireText; sources=(Sources/QuireText/*.swift); harness=(Fuzz/TextFuzz.swift); cflags=(); libs=() ;;
    *) echo "usage: scripts/fuzz.sh codec|nyt|text [SECONDS] [-- libFuzzer options]" >&2; exit 64 ;;
esac

out=".build/fuzz/$target"
mkdir -p "$out/modules" "$out/corpus" "$out/artifacts"
sanitize=(-sanitize=fuzzer,address -O -g -swift-version 6)

# The instrumented module is rebuilt only when one of its sources changed.
if [ ! -f "$out/$module.o" ] || [ -n "$(find "${sources[@]}" -newer "$out/$module.o" | head -1)" ]; then
    echo "fuzz: building $module (instrumented)" >&2
    swiftc "${sanitize[@]}" "${cflags[@]}" -parse-as-library -wmo -module-name "$module" \
        -emit-module -emit-module-path "$out/modules/$module.swiftmodule" \
        -c "${sources[@]}" -o "$out/$module.o"
fi
echo "fuzz: building the $target harness" >&2
swiftc "${sanitize[@]}" "${cflags[@]}" -parse-as-library -module-name "Fuzz_$target" -I "$out/modules" \
    "${harness[@]}" "$out/$module.o" "${libs[@]}" -o "$out/fuzz-$target" 2> >(grep -v 'Cannot export local symbol' >&2)

echo "fuzz: running $target for ${seconds}s" >&2
start=$(date +%s)
status=0
# Seeds are (re)written into the corpus by the harness's LLVMFuzzerInitialize.
# SWIFT_BACKTRACE off: the runtime's crash handler would read memory under ASan and hide the trap.
SWIFT_BACKTRACE=enable=no QUIRE_FUZZ_SEED_DIR="$out/corpus" "$out/fuzz-$target" "$out/corpus" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$out/artifacts/" -print_final_stats=1 "${extra[@]}" 2>"$out/log" || status=$?
elapsed=$(( $(date +%s) - start ))

runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/log" | grep -o '[0-9]*$' || echo '?')
cov=$(grep -o 'cov: [0-9]*' "$out/log" | tail -1 || true)
corpus=$(ls "$out/corpus" | wc -l)
echo "fuzz: $target: ${elapsed}s, $runs executions, $cov, corpus $corpus files, exit $status"
artifacts=$(ls "$out/artifacts" 2>/dev/null | wc -l)
if [ "$status" -ne 0 ] || [ "$artifacts" -gt 0 ]; then
    echo "fuzz: FINDINGS in $out/artifacts (log: $out/log):"
    for f in "$out"/artifacts/*; do
        [ -f "$f" ] || continue
        echo "  $f: $(od -An -v -tx1 "$f" | tr -d ' \n' | head -c 400)"
    done
    grep -E 'ERROR|Fatal error|SUMMARY|==[0-9]+==' "$out/log" | head -20
    exit 1
fi
echo "fuzz: no findings"
