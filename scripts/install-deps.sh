#!/usr/bin/env bash
# Installs the Debian C libraries Quire links against (LMDB, libcurl, zstd, libmicrohttpd and
# zlib for `quire serve`, SQLite for the benchmark), pkg-config, and the tools beside them
# (chromium and python3 for the browser test, wrk for scripts/bench-serve.sh, etcd-server and
# etcd-client for the cluster tests and scripts/cluster-test.sh). Idempotent: installs only what
# is missing.
set -euo pipefail
packages=(liblmdb-dev lmdb-utils libcurl4-openssl-dev libzstd-dev libsqlite3-dev pkg-config
    libmicrohttpd-dev zlib1g-dev chromium python3 wrk etcd-server etcd-client)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
