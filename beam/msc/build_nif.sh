#!/bin/sh
# rebar3's compile hook: builds the NIF into priv/ with cargo.
#
# As a git_subdir dependency rebar3 checks out only beam/msc, sparsely; the
# crate and the workspace it builds from are in the same clone, so they are
# checked out first (from the clone itself: no network).
set -eu
cd "$(dirname "$0")"
if [ "$(git -C ../.. config --bool core.sparseCheckout 2>/dev/null || true)" = "true" ]; then
    git -C ../.. sparse-checkout disable
fi
exec ../build.sh --nif-only
