//! Generates the protocol's message types from referee.proto with prost-build.
//!
//! The .proto is read from SEVENROCKS_PROTO_DIR (the folder holding
//! `sevenrocks/v1/referee.proto`) when set; else from `referee.proto` beside
//! Cargo.toml when the kit was copied out with it (a league's build step sees
//! nothing but the bundle: docs/league.md); else from the repository
//! (`../../../proto`). prost-build runs the `protoc` compiler: the one in PROTOC if
//! set, else `protoc` on the PATH (Debian: `apt-get install protobuf-compiler`).
use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (proto, dir) = match std::env::var_os("SEVENROCKS_PROTO_DIR") {
        Some(d) => (PathBuf::from(&d).join("sevenrocks/v1/referee.proto"), PathBuf::from(d)),
        None if here.join("referee.proto").is_file() => (here.join("referee.proto"), here.clone()),
        None => {
            let dir = here.join("../../../proto");
            (dir.join("sevenrocks/v1/referee.proto"), dir)
        }
    };
    println!("cargo:rerun-if-changed={}", proto.display());
    println!("cargo:rerun-if-changed={}", here.join("referee.proto").display());
    println!("cargo:rerun-if-env-changed=SEVENROCKS_PROTO_DIR");
    prost_build::compile_protos(&[proto], &[dir])
}
