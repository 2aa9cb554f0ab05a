#!/usr/bin/env sh
# Minimises a campaign's corpus of TARGET (cargo fuzz cmin) and copies at
# most N of its inputs (default 300), spread over the input sizes, to the
# committed corpus testdata/regression/corpus/TARGET/, replacing it.
#   ./commit-corpus.sh TARGET [N]
set -eu
cd "$(dirname "$0")"
target=$1
keep=${2:-300}
RUSTC_BOOTSTRAP=1 cargo fuzz cmin -O "$target" "corpus/$target" -- -rss_limit_mb=4096 \
    > "logs/$target.cmin.log" 2>&1
dest=../testdata/regression/corpus/$target
rm -rf "$dest"
mkdir -p "$dest"
# The targets reject inputs over 4096 bytes (MAX_INPUT): they test nothing.
find "corpus/$target" -type f -size +4096c -delete
total=$(ls "corpus/$target" | wc -l)
# Every (total/keep)-th input by size, so that short and long ones stay.
ls -S -r "corpus/$target" | awk -v total="$total" -v keep="$keep" '
    { if (total <= keep || int(NR * keep / total) != int((NR - 1) * keep / total)) print }' |
while IFS= read -r f; do
    cp "corpus/$target/$f" "$dest/$f"
done
# Only inputs that reach the oracle: libFuzzer's merge may keep one the
# target rejects.
(cd .. && cargo run -q -p msc-testkit --example replay -- "$target" "testdata/regression/corpus/$target"/*) |
    sed -n 's/^\(.*\): [0-9]* bytes, .*, oracle reached: false$/\1/p' |
    while IFS= read -r f; do rm -f "../$f"; done
echo "$target: $total inputs after cmin, $(ls "$dest" | wc -l) committed"
