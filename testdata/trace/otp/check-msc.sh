#!/bin/sh
# Runs every scenario in the given directories (or files) through msc, on
# both engines and both stack keepers, against its golden file, and lists
# the ones that differ. With campaigns of generate.sh --random:
#
#     testdata/trace/otp/generate.sh --random 5000 7 /tmp/campaign
#     testdata/trace/otp/check-msc.sh /tmp/campaign
#
# MSC names the binary (default: target/release/msc, built if missing).
# Exits non-zero if any run differs; prints each difference's first lines.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
msc=${MSC:-$top/target/release/msc}
if [ ! -x "$msc" ]; then
    cargo build --release --manifest-path "$top/Cargo.toml" -p msc-cli >&2
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
total=0
failed=0
for arg in "$@"; do
    if [ -d "$arg" ]; then files=$(ls "$arg"/*.scenario); else files=$arg; fi
    for scenario in $files; do
        golden=${scenario%.scenario}.expected
        [ -f "$golden" ] || continue
        total=$((total + 1))
        for engine in interp jit; do
            for stack in core host; do
                if ! "$msc" trace --engine "$engine" --stack "$stack" --expect "$golden" \
                    "$scenario" > "$out" 2>&1; then
                    failed=$((failed + 1))
                    echo "DIFF $scenario ($engine, $stack keeps the stacks):"
                    head -n 4 "$out" | sed 's/^/    /'
                    continue 3
                fi
            done
        done
    done
done
echo "$total scenario(s), $failed differ"
[ "$failed" -eq 0 ]
