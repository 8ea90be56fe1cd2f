//! Generates the protocol's message types from referee.proto with prost-build.
//!
//! The .proto is read from the repository (`../../../proto`), or from the folder
//! in SEVENROCKS_PROTO_DIR when the kit is copied elsewhere. prost-build runs the
//! `protoc` compiler: the one in PROTOC if set, else `protoc` on the PATH (Debian:
//! `apt-get install protobuf-compiler`).
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = match std::env::var_os("SEVENROCKS_PROTO_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../proto"),
    };
    let proto = dir.join("sevenrocks/v1/referee.proto");
    println!("cargo:rerun-if-changed={}", proto.display());
    println!("cargo:rerun-if-env-changed=SEVENROCKS_PROTO_DIR");
    prost_build::compile_protos(&[proto], &[dir])
}
