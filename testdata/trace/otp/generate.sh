#!/bin/sh
# Regenerates testdata/trace/*.expected from testdata/trace/*.scenario by
# running each scenario on a real Erlang/OTP 27 VM with run-scenario.escript,
# and makes random scenarios with their goldens.
#
# Usage (from anywhere, as a user allowed to chroot):
#
#     testdata/trace/otp/generate.sh              # every scenario
#     testdata/trace/otp/generate.sh NAME ...     # only these (NAME.scenario)
#     testdata/trace/otp/generate.sh --random COUNT SEED [DIR [FIRST]]
#
# Without arguments it first rewrites the *-dynamic.scenario files: for every
# scenario of call_trace_SUITE, trace_local_SUITE, trace_meta_SUITE,
# match_spec_SUITE and trace_call_memory_SUITE that uses only the legacy API
# (no session_create), dynamic-variant.escript writes NAME-dynamic.scenario,
# the same scenario as OTP's dynamic_pre_post test group runs it.
#
# --random writes COUNT scenarios of random-scenarios.escript for SEED
# (numbered from FIRST, default 1) to DIR (default testdata/trace/random),
# each with its golden file. A random scenario that OTP cannot run (the
# escript fails) is reported and removed, and the others go on; the script
# then exits non-zero. The checked-in ones are `--random 1000 12`.
#
# Needs: an OTP 27 installation in a chroot (default /opt/otp27, override
# with OTP_CHROOT=/path) whose `erl` is on the chroot's PATH, and a scratch
# directory inside it (default /tmp/scenario-gen, relative to the chroot;
# override with OTP_SCRATCH). The .expected files were made with OTP 27.3
# (erts 15.2.7). The tests never need Erlang: the .expected files are
# checked in.
#
# Scenarios run JOBS at a time (default: the number of processors), each in
# its own VM. run-scenario.escript is compiled once, and the modules that
# scenarios declare are compiled once per source (SCENARIO_CACHE, in the
# scratch directory).
#
# Scenarios that name the tracer module tracer_test (tracer_SUITE-*,
# tracer_module-*, some random ones) also need the NIF library
# tracer_test.so: it is built here from tracer_test.c with the host's C
# compiler (CC, default cc) against the chroot's erl_nif.h, which comes with
# the chroot's erlang-dev package (`chroot /opt/otp27 apt-get install
# erlang-dev`; override the include directory with ERL_NIF_INCLUDE=/path,
# relative to the host).
#
# GOLDEN_DIR=DIR writes each golden to DIR/NAME.expected instead of next to
# its scenario: the goldens of another release, from the same scenarios
# (testdata/trace/otp29/ and otp29/random/ for OTP 29). The scenarios are
# then not rewritten: a *-dynamic.scenario or random scenario that this
# release's escripts write differently from the one already there stops the
# script (the scenarios are shared by every release).
#
#     OTP_CHROOT=/opt/otp29 GOLDEN_DIR=testdata/trace/otp29 \
#         testdata/trace/otp/generate.sh
#     OTP_CHROOT=/opt/otp29 GOLDEN_DIR=testdata/trace/otp29/random \
#         testdata/trace/otp/generate.sh --random 1000 12
#
# A (non-random) scenario whose run fails (e.g. because a puppet process did
# not reach the state the scenario model expects) stops the script with an
# error and leaves the old .expected file alone.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tracedir=$(dirname "$here")
root=${OTP_CHROOT:-/opt/otp27}
scratch=${OTP_SCRATCH:-/tmp/scenario-gen}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if [ -n "${GOLDEN_DIR:-}" ]; then
    mkdir -p "$GOLDEN_DIR"
    GOLDEN_DIR=$(cd "$GOLDEN_DIR" && pwd)
    export GOLDEN_DIR
fi

# The golden file of scenario $1: next to it, or in GOLDEN_DIR.
golden_of() {
    if [ -n "${GOLDEN_DIR:-}" ]; then
        echo "$GOLDEN_DIR/$(basename "$1" .scenario).expected"
    else
        echo "${1%.scenario}.expected"
    fi
}

# Puts the scenario $1, just written by this release's escripts, at $2; with
# GOLDEN_DIR, $2 must already hold the same scenario.
place_scenario() {
    if [ -z "${GOLDEN_DIR:-}" ]; then
        cp "$1" "$2"
    elif ! cmp -s "$1" "$2"; then
        echo "$2: this release writes it differently (or it is missing);" \
            "the scenarios are shared by every release" >&2
        exit 1
    fi
}

# One scenario: generate.sh --one SCENARIO [OUTPUT] (the workers below;
# OUTPUT defaults to the scenario's golden file).
if [ "${1:-}" = "--one" ]; then
    scenario=$2
    out=${3:-$(golden_of "$2")}
    name=$(basename "$scenario" .scenario)
    work=$(mktemp -d "$root$scratch/run.XXXXXX")
    inside=${work#"$root"}
    cp "$scenario" "$work/$name.scenario"
    if chroot "$root" env SCENARIO_CACHE="$scratch/cache" \
        erl +S 1 -noshell -pa "$scratch" -run run_scenario main "$inside/$name.scenario" \
        > "$work/$name.out" 2> "$work/$name.err"; then
        mv "$work/$name.out" "$out"
        rm -rf "$work"
        echo "ok   $name"
    else
        cat "$work/$name.err" >&2
        rm -rf "$work"
        echo "FAIL $name" >&2
        exit 1
    fi
    exit 0
fi

mkdir -p "$root$scratch/cache"
dist_list=$(mktemp)
trap 'rm -f "$dist_list"' EXIT
grep -l -F '{node,' "$tracedir"/*.scenario > "$dist_list" || true
echo /dev/null/none >> "$dist_list"

# run-scenario.escript as a compiled module (an escript compiles itself at
# every start), next to tracer_test.so.
prepare() {
    {
        echo '-module(run_scenario).'
        echo '-export([main/1]).'
        sed '1d' "$here/run-scenario.escript"
    } > "$root$scratch/run_scenario.erl"
    chroot "$root" erlc -o "$scratch" "$scratch/run_scenario.erl"
    if grep -q tracer_test "$@"; then
        include=${ERL_NIF_INCLUDE:-$root/usr/lib/erlang/usr/include}
        if [ ! -f "$include/erl_nif.h" ]; then
            echo "no erl_nif.h in $include: chroot $root apt-get install erlang-dev" >&2
            exit 1
        fi
        ${CC:-cc} -shared -fPIC -O2 -Wall -Wextra -Werror -I"$include" \
            -o "$root$scratch/tracer_test.so" "$here/tracer_test.c"
    fi
    chroot "$root" erl -noshell -eval \
        'io:format("OTP ~s, erts ~s~n", [erlang:system_info(otp_release), erlang:system_info(version)]), halt().'
}

# Runs every scenario named on standard input (one path a line), JOBS at a
# time, writing NAME.expected next to each (or in GOLDEN_DIR). Scenarios that start
# distribution run alone afterwards: messages between nodes take longer on
# a loaded machine than the escript's waits allow for.
run_all() {
    list=$(cat)
    status=0
    echo "$list" | grep -v -x -F -f "$dist_list" |
        xargs -P "$jobs" -I{} "$0" --one {} ||
        status=1
    echo "$list" | grep -x -F -f "$dist_list" |
        xargs -P 1 -I{} "$0" --one {} ||
        status=1
    return $status
}

if [ "${1:-}" = "--random" ]; then
    count=$2
    seed=$3
    dir=${4:-$tracedir/random}
    first=${5:-1}
    mkdir -p "$dir"
    gen="$root$scratch/random"
    rm -rf "$gen"
    mkdir -p "$gen"
    cp "$here/random-scenarios.escript" "$root$scratch/random-scenarios.escript"
    chroot "$root" escript "$scratch/random-scenarios.escript" \
        "$seed" "$count" "$scratch/random" "$first"
    for scenario in "$gen"/*.scenario; do
        place_scenario "$scenario" "$dir/$(basename "$scenario")"
    done
    set -- "$dir"/random-"$seed"-*.scenario
    prepare "$@"
    failed=0
    for scenario in "$@"; do echo "$scenario"; done | run_all || failed=1
    if [ "$failed" = 1 ]; then
        for scenario in "$@"; do
            if [ ! -f "$(golden_of "$scenario")" ]; then
                if [ -n "${GOLDEN_DIR:-}" ]; then
                    echo "no golden for $(basename "$scenario"): OTP could not run it" >&2
                else
                    echo "removed $(basename "$scenario"): OTP could not run it" >&2
                    rm -f "$scenario"
                fi
            fi
        done
        exit 1
    fi
    exit 0
fi

if [ "$#" -eq 0 ]; then
    cp "$here/dynamic-variant.escript" "$root$scratch/dynamic-variant.escript"
    for scenario in "$tracedir"/call_trace_SUITE-*.scenario \
                    "$tracedir"/trace_local_SUITE-*.scenario \
                    "$tracedir"/trace_meta_SUITE-*.scenario \
                    "$tracedir"/match_spec_SUITE-*.scenario \
                    "$tracedir"/trace_call_memory_SUITE-*.scenario; do
        name=$(basename "$scenario" .scenario)
        case "$name" in *-dynamic) continue ;; esac
        if grep -q session_create "$scenario"; then continue; fi
        cp "$scenario" "$root$scratch/$name.scenario"
        chroot "$root" escript "$scratch/dynamic-variant.escript" \
            "$scratch/$name.scenario" "$scratch/$name-dynamic.scenario"
        place_scenario "$root$scratch/$name-dynamic.scenario" "$tracedir/$name-dynamic.scenario"
    done
    set -- "$tracedir"/*.scenario
else
    names=""
    for n in "$@"; do
        names="$names $tracedir/${n%.scenario}.scenario"
    done
    # shellcheck disable=SC2086
    set -- $names
fi

prepare "$@"
for scenario in "$@"; do echo "$scenario"; done | run_all
