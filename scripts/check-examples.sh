#!/usr/bin/env bash
# Builds the package under Examples/ that embeds Quire as an outside program would (the README's
# "Embedding" section), and checks that reading a record's bytes after its read, and opening the
# LMDB layer under the store, do not compile.
set -euo pipefail
cd "$(dirname "$0")/../Examples/Embedding"
echo "== examples: build the embedding program"
swift build --product Embedding -Xswiftc -warnings-as-errors

# expect_refused PRODUCT ERROR WHAT: PRODUCT must fail to build, with ERROR among its messages.
expect_refused() {
    local product=$1 expected=$2 what=$3 output
    if output=$(swift build --product "$product" 2>&1); then
        echo "$product compiled: $what" >&2
        exit 1
    fi
    if ! grep -q "$expected" <<<"$output"; then
        echo "$product failed for another reason:" >&2
        echo "$output" | grep -E "error" >&2 || true
        exit 1
    fi
    echo "ok: $product is refused by the compiler"
}

echo "== examples: bytes escaping a read must not compile"
expect_refused EscapeAttempt "conform to 'Escapable'" "record bytes can escape a read"
echo "== examples: the LMDB layer must be out of an embedder's reach"
expect_refused LMDBAttempt "cannot find 'Environment' in scope" "an embedder can open a raw LMDB environment"
