#!/usr/bin/env sh
# Fills corpus/<target>/ with seeds for every fuzz target, so that runs
# start from realistic inputs instead of empty ones:
#   - the committed corpora (testdata/regression/corpus/<target>/, what
#     earlier runs found, minimised) and the saved regression inputs;
#   - text targets: each spec and term line of the repository's corpora
#     (parse_text), each fun of the fun2ms goldens (fun2ms);
#   - etf_decode: those terms encoded by `msc etf encode`;
#   - targets that build their input from bytes (Arbitrary): random bytes
#     of 64 to 4096 bytes, so that specs and scenarios are large at once.
# Run from fuzz/: ./seed-corpora.sh [msc binary]. Needs cargo (or the msc
# binary given) and a POSIX shell; nothing else.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
data="$root/testdata"
msc=${1:-}
if [ -z "$msc" ]; then
    (cd "$root" && cargo build --release --quiet -p msc-cli)
    msc="$root/target/release/msc"
fi
targets="parse_text text_roundtrip etf_roundtrip etf_decode compile differential runtime_ops fun2ms stream_run"

for t in $targets; do
    mkdir -p "$here/corpus/$t"
    if [ -d "$data/regression/corpus/$t" ]; then
        cp "$data/regression/corpus/$t"/* "$here/corpus/$t/" 2>/dev/null || true
    fi
    for f in "$data/regression/fuzz/$t"-*; do
        [ -e "$f" ] && cp "$f" "$here/corpus/$t/"
    done
done

# One file per line of the term corpora (specs, inputs, expected answers).
n=0
for f in "$data"/conformance/*.terms "$data"/bench/*.ms "$data"/bench/*.terms \
         "$data"/cli/*.ms "$data"/cli/*.terms "$data"/dbg/specs.terms "$data"/etf/otp27.terms; do
    [ -e "$f" ] || continue
    head -n 200 "$f" | while IFS= read -r line; do
        case "$line" in ''|%*) continue ;; esac
        n=$((n + 1))
        name=$(printf '%s' "$line" | cksum | cut -d' ' -f1)
        printf '%s\n' "$line" | head -c 4096 > "$here/corpus/parse_text/seed-$name"
        # The same term encoded, when it is one term msc can encode.
        seed="$here/corpus/etf_decode/seed-$name"
        printf '%s\n' "$line" | "$msc" etf encode 2>/dev/null > "$seed" || rm -f "$seed"
        # The targets reject inputs over 4096 bytes (and a cut one is no term).
        if [ -f "$seed" ] && [ "$(wc -c < "$seed")" -gt 4096 ]; then rm -f "$seed"; fi
    done
done

# Each fun of the fun2ms goldens: {Dialect, "Fun text", ...}.
for f in "$data"/otp/fun2ms/*.cases; do
    grep -v '^%' "$f" | head -n 400 | while IFS= read -r line; do
        fun=$(printf '%s' "$line" | sed -n 's/^{[a-z]*,"\(fun.*end\)",.*/\1/p')
        [ -n "$fun" ] || continue
        name=$(printf '%s' "$fun" | cksum | cut -d' ' -f1)
        # The goldens keep newlines and quotes escaped as Erlang strings.
        printf '%b' "$(printf '%s' "$fun" | sed 's/\\"/"/g')" | head -c 4096 \
            > "$here/corpus/fun2ms/seed-$name"
    done
done

# Random bytes for the targets that build their input from bytes.
for t in text_roundtrip etf_roundtrip compile differential runtime_ops stream_run fun2ms parse_text; do
    for len in 64 128 256 512 1024 2048 4096; do
        for i in 1 2 3 4; do
            head -c "$len" /dev/urandom > "$here/corpus/$t/random-$len-$i"
        done
    done
done
# Limits mode (a leading NUL byte) for the text targets.
for t in fun2ms parse_text; do
    for len in 16 64 256 1024; do
        { printf '\000'; head -c "$len" /dev/urandom; } > "$here/corpus/$t/limits-$len"
    done
done

for t in $targets; do
    echo "$t: $(ls "$here/corpus/$t" | wc -l) seeds"
done
