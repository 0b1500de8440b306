//! The hardware tile unit: each [`TileUnit`] function is one AMX instruction in `asm!`.
//!
//! **Run on hardware once, not in CI**: the development machines and CI have no AMX. In
//! session 29 a 16-core KVM guest of an AMX Xeon (family 6, model 207) ran the testsuite
//! for the `sapphirerapids` configuration (16 380 tests, 1 and 16 threads, all PASS), the
//! low-precision, brgemm and model tests, and a cross-check against the skx kernels (i8 and
//! u8 × i8 bit for bit; bf16 within 1.5e-5 relative at 2048³): see `docs/Performance.md`,
//! "AMX on hardware". CI runs the same tile program against the software model
//! ([`super::TileModel`]) only.
//!
//! Tile registers are written into the instruction text from the const generic index
//! (`tmm{t}`), the only way to name them: `asm!` has no register class for tiles. The rust
//! `amx-*` target features are unstable and not needed: the assembler takes the mnemonics
//! without them. Every block is volatile (not `pure`), and none claims less than "may touch
//! tile state": the register-only ones are `nomem` (which, without `pure`, still counts as
//! writing state the compiler cannot see), and the ones with a memory operand, `ldtilecfg`
//! included, declare no memory options at all, so the compiler neither drops nor reorders
//! any tile instruction against another, nor against the Rust code around a load or store.

use std::arch::asm;

use super::tile::{TileConfig, TileUnit};

/// The AMX instructions themselves (Sapphire Rapids and later). See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct Amx;

impl TileUnit for Amx {
    #[inline(always)]
    unsafe fn load_config(cfg: &TileConfig) {
        // SAFETY: the caller's promise (the trait's contract); `cfg` is 64 readable bytes.
        unsafe { asm!("ldtilecfg [{cfg}]", cfg = in(reg) cfg, options(nostack, preserves_flags)) };
    }

    #[inline(always)]
    unsafe fn release() {
        // SAFETY: the caller's promise (the trait's contract).
        unsafe { asm!("tilerelease", options(nostack, preserves_flags, nomem)) };
    }

    #[inline(always)]
    unsafe fn zero<const T: u8>() {
        const { assert!(T < 8) };
        // SAFETY: the caller's promise (the trait's contract).
        unsafe { asm!("tilezero tmm{t}", t = const T, options(nostack, preserves_flags, nomem)) };
    }

    #[inline(always)]
    unsafe fn load<const T: u8>(src: *const u8, stride: isize) {
        const { assert!(T < 8) };
        // SAFETY: the caller's promise (the trait's contract): the configured rows of tile T
        // are readable at `src + r·stride`.
        unsafe {
            asm!(
                "tileloadd tmm{t}, [{src} + {stride} * 1]",
                t = const T,
                src = in(reg) src,
                stride = in(reg) stride,
                options(nostack, preserves_flags)
            )
        };
    }

    #[inline(always)]
    unsafe fn store<const T: u8>(dst: *mut u8, stride: isize) {
        const { assert!(T < 8) };
        // SAFETY: the caller's promise (the trait's contract): the configured rows of tile T
        // are writable at `dst + r·stride`.
        unsafe {
            asm!(
                "tilestored [{dst} + {stride} * 1], tmm{t}",
                t = const T,
                dst = in(reg) dst,
                stride = in(reg) stride,
                options(nostack, preserves_flags)
            )
        };
    }

    #[inline(always)]
    unsafe fn dpbf16ps<const C: u8, const A: u8, const B: u8>() {
        const { assert!(C < 8 && A < 8 && B < 8 && C != A && C != B && A != B) };
        // SAFETY: the caller's promise (the trait's contract); registers only.
        unsafe {
            asm!(
                "tdpbf16ps tmm{c}, tmm{a}, tmm{b}",
                c = const C,
                a = const A,
                b = const B,
                options(nostack, preserves_flags, nomem)
            )
        };
    }

    #[inline(always)]
    unsafe fn dpbssd<const C: u8, const A: u8, const B: u8>() {
        const { assert!(C < 8 && A < 8 && B < 8 && C != A && C != B && A != B) };
        // SAFETY: the caller's promise (the trait's contract); registers only.
        unsafe {
            asm!(
                "tdpbssd tmm{c}, tmm{a}, tmm{b}",
                c = const C,
                a = const A,
                b = const B,
                options(nostack, preserves_flags, nomem)
            )
        };
    }

    #[inline(always)]
    unsafe fn dpbusd<const C: u8, const A: u8, const B: u8>() {
        const { assert!(C < 8 && A < 8 && B < 8 && C != A && C != B && A != B) };
        // SAFETY: the caller's promise (the trait's contract); registers only.
        unsafe {
            asm!(
                "tdpbusd tmm{c}, tmm{a}, tmm{b}",
                c = const C,
                a = const A,
                b = const B,
                options(nostack, preserves_flags, nomem)
            )
        };
    }
}
