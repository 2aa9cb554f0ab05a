#!/bin/sh
# Copies the data this repository keeps from the team's shared folder
# (../shared beside the checkout) into testdata/, so that a clone alone has
# everything its tests and benchmarks read:
#
#   ../shared/conformance/otp27/random-seed1.terms -> testdata/conformance/otp27-random-seed1.terms
#   ../shared/bench/data/*.ms, *.terms              -> testdata/bench/
#
# Run it when the shared folder changes; it says which files changed.
# SHARED overrides where the shared folder is.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
shared=${SHARED:-$here/../../shared}
if [ ! -d "$shared" ]; then
    echo "refresh-shared.sh: no shared folder at $shared" >&2
    exit 1
fi

copy() {
    if ! cmp -s "$1" "$2"; then
        cp "$1" "$2"
        chmod 644 "$2"
        echo "updated $2"
    fi
}

mkdir -p "$here/conformance" "$here/bench"
copy "$shared/conformance/otp27/random-seed1.terms" "$here/conformance/otp27-random-seed1.terms"
for f in "$shared"/bench/data/*.ms "$shared"/bench/data/*.terms; do
    copy "$f" "$here/bench/$(basename "$f")"
done
