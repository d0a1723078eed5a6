#!/usr/bin/env bash
# Builds the package under Examples/ that embeds Quire as an outside program would (the README's
# "Embedding" section), and checks that reading a record's bytes after its read, and opening the
# LMDB layer under the store, do not compile.
set -euo pipefail
cd "$(dirname "$0")/../Examples/Embedding"
echo "== examples: build the embedding program"
swift build --product Embedding -Xswiftc -warnings-as-errors
echo "== examples: bytes escaping a read must not compile"
if output=$(swift build --product EscapeAttempt 2>&1); then
    echo "EscapeAttempt compiled: record bytes can escape a read" >&2
    exit 1
fi
if ! grep -q "conform to 'Escapable'" <<<"$output"; then
    echo "EscapeAttempt failed for another reason:" >&2
    echo "$output" | grep -E "error" >&2 || true
    exit 1
fi
echo "ok: EscapeAttempt is refused by the compiler"
echo "== examples: the LMDB layer must be out of an embedder's reach"
if output=$(swift build --product LMDBAttempt 2>&1); then
    echo "LMDBAttempt compiled: an embedder can open a raw LMDB environment" >&2
    exit 1
fi
if ! grep -q "cannot find 'Environment' in scope" <<<"$output"; then
    echo "LMDBAttempt failed for another reason:" >&2
    echo "$output" | grep -E "error" >&2 || true
    exit 1
fi
echo "ok: LMDBAttempt is refused by the compiler"
