#!/usr/bin/env sh
# Builds the msc OTP application (beam/msc) in place: the NIF (release
# mode) into msc/priv/, the modules into msc/ebin/, and links beam/ebin and
# beam/priv to them. Afterwards `erl -pa beam/ebin` works.
#
# Needs cargo and erlc, and nothing from the network but the crates cargo
# already has (set CARGO_NET_OFFLINE=true to make sure).
#   --nif-only  build msc/priv/ only (rebar3's hook: rebar3 compiles the modules)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# rebar3 runs the hook from beam/msc: the crate is the directory above.
case "$here" in
    */beam/msc) here=$(dirname "$here") ;;
esac
cd "$here"

cargo build --release --locked -p msc-beam
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
mkdir -p msc/priv msc/ebin
case "$(uname -s)" in
    Darwin) lib=libmsc_nif.dylib ;;
    *) lib=libmsc_nif.so ;;
esac
# erlang:load_nif/2 wants the platform's suffix; macOS loads .so too.
cp "$target/release/$lib" msc/priv/libmsc_nif.so

if [ "${1:-}" = "--nif-only" ]; then
    exit 0
fi
erlc -Wall -Werror -o msc/ebin msc/src/*.erl
cp msc/src/msc.app.src msc/ebin/msc.app
ln -sfn msc/ebin ebin
ln -sfn msc/priv priv
echo "built $here/msc/ebin (linked as $here/ebin) and $here/msc/priv/libmsc_nif.so"
