#!/bin/sh
# Regenerates testdata/trace/*.expected from testdata/trace/*.scenario by
# running each scenario on a real Erlang/OTP 27 VM with run-scenario.escript.
#
# Usage (from anywhere, as a user allowed to chroot):
#
#     testdata/trace/otp/generate.sh              # every scenario
#     testdata/trace/otp/generate.sh NAME ...     # only these (NAME.scenario)
#
# Without arguments it first rewrites the *-dynamic.scenario files: for every
# scenario of call_trace_SUITE, trace_local_SUITE, trace_meta_SUITE,
# match_spec_SUITE and trace_call_memory_SUITE that uses only the legacy API
# (no session_create), dynamic-variant.escript writes NAME-dynamic.scenario,
# the same scenario as OTP's dynamic_pre_post test group runs it.
#
# Needs: an OTP 27 installation in a chroot (default /opt/otp27, override
# with OTP_CHROOT=/path) whose `escript` is on the chroot's PATH, and a
# scratch directory inside it (default /tmp/scenario-gen, relative to the
# chroot; override with OTP_SCRATCH). The .expected files were made with
# OTP 27.3 (erts 15.2.7). The tests never need Erlang: the .expected files
# are checked in.
#
# Scenarios that name the tracer module tracer_test (tracer_SUITE-*,
# tracer_module-*) also need the NIF library tracer_test.so: it is built
# here from tracer_test.c with the host's C compiler (CC, default cc) against
# the chroot's erl_nif.h, which comes with the chroot's erlang-dev package
# (`chroot /opt/otp27 apt-get install erlang-dev`; override the include
# directory with ERL_NIF_INCLUDE=/path, relative to the host).
#
# A scenario whose run fails (the escript exits non-zero, e.g. because a
# puppet process did not reach the state the scenario model expects) stops
# the script with an error and leaves the old .expected file alone.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tracedir=$(dirname "$here")
root=${OTP_CHROOT:-/opt/otp27}
scratch=${OTP_SCRATCH:-/tmp/scenario-gen}

mkdir -p "$root$scratch"
cp "$here/run-scenario.escript" "$root$scratch/run-scenario.escript"

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
        cp "$root$scratch/$name-dynamic.scenario" "$tracedir/$name-dynamic.scenario"
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

for scenario in "$@"; do
    name=$(basename "$scenario" .scenario)
    cp "$scenario" "$root$scratch/$name.scenario"
    if chroot "$root" escript "$scratch/run-scenario.escript" \
        "$scratch/$name.scenario" > "$root$scratch/$name.out"; then
        mv "$root$scratch/$name.out" "$tracedir/$name.expected"
        echo "ok   $name"
    else
        echo "FAIL $name (see above)" >&2
        exit 1
    fi
done
