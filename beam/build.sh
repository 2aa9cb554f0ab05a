#!/usr/bin/env sh
# Builds the msc OTP application in place: the NIF (release mode) into
# priv/, the modules into ebin/. Afterwards `erl -pa beam/ebin` works.
# Needs cargo and erlc, and nothing from the network but the crates cargo
# already has (set CARGO_NET_OFFLINE=true to make sure).
#   --nif-only  build priv/ only (rebar3's hook: rebar3 compiles the modules)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

cargo build --release --locked -p msc-beam
target=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
mkdir -p priv ebin
case "$(uname -s)" in
    Darwin) lib=libmsc_nif.dylib ;;
    *) lib=libmsc_nif.so ;;
esac
# erlang:load_nif/2 wants the platform's suffix; macOS loads .so too.
cp "$target/release/$lib" priv/libmsc_nif.so

if [ "${1:-}" = "--nif-only" ]; then
    exit 0
fi
erlc -Wall -Werror -o ebin src/*.erl
cp src/msc.app.src ebin/msc.app
echo "built $here/ebin and $here/priv/libmsc_nif.so"
