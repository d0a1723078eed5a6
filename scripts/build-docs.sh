#!/usr/bin/env bash
# Builds the DocC documentation of Quire, QuireCodec, QuireFetch and QuireCluster with the toolchain's own
# `docc` (no plugin): symbol graphs from SwiftPM, then one archive per module under .build/docs.
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs=$(find .build -type d -name symbolgraph | head -n 1)
out=.build/docs
mkdir -p "$out"
for module in Quire QuireCodec QuireFetch QuireCluster; do
    staging=$(mktemp -d)
    cp "$graphs/$module".symbols.json "$staging"/
    status=0
    docc convert "Sources/$module/$module.docc" --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.quire.$module" --additional-symbol-graph-dir "$staging" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors >"$staging/log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        cat "$staging/log" >&2
        rm -rf "$staging"
        exit "$status"
    fi
    rm -rf "$staging"
    echo "== docs: $out/$module.doccarchive"
done
