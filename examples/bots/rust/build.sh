#!/bin/sh
# Build the bot: ./build.sh   ->   target/release/sevenrocks-rust-bot
#
# With Debian's packaged crates installed (apt-get install librust-h2-dev
# librust-prost-dev librust-prost-build-dev librust-tokio-dev librust-http-dev
# librust-bytes-dev protobuf-compiler) it builds offline from
# /usr/share/cargo/registry, which is what Cargo.lock pins. Without them it is a
# plain `cargo build --release` from crates.io (delete Cargo.lock first: Debian's
# packages record checksums crates.io does not use).
set -eu
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
DEBIAN_CRATES=/usr/share/cargo/registry
if [ -d "$DEBIAN_CRATES" ] && [ -z "${SEVENROCKS_USE_CRATES_IO:-}" ]; then
    exec cargo build --release --offline --locked \
        --config 'source.crates-io.replace-with="debian"' \
        --config "source.debian.directory=\"$DEBIAN_CRATES\"" "$@"
fi
exec cargo build --release "$@"
