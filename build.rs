//! Build script: one cfg, `oxblis_unoptimized`, set when the crate is compiled without
//! optimization (`OPT_LEVEL` 0, a debug build's default, also when oxblis is a dependency
//! of a debug build). The kernels' per-shape instances are then separate functions instead of
//! inlined into their dispatchers: unoptimized, LLVM gives every inlined instance stack
//! slots of its own, and the sup dispatchers' frames grew to several MiB (sgemm's to 10 MiB,
//! past an 8 MiB main thread's stack; docs/Performance.md, session 34). Optimized builds
//! inline them, as the kernels' target features require for speed.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(oxblis_unoptimized)");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if std::env::var("OPT_LEVEL").is_ok_and(|level| level == "0") {
        println!("cargo::rustc-cfg=oxblis_unoptimized");
    }
}
