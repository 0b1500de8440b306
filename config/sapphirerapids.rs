//! `sapphirerapids`: Xeons with AMX (Sapphire Rapids and later), chosen by CPU features and
//! Linux's permission for tile data. The skx context with AMX tile kernels for the three
//! low-precision pairs: bf16 × bf16 → f32 (`tdpbf16ps`), i8 × i8 and u8 × i8 → i32
//! (`tdpbssd`, `tdpbusd`); f32, f64 and complex stay on the AVX-512 kernels, with two
//! settings retuned for these Xeons' 2 MiB L2 (session 51, on the lent Xeon): dgemm's KC
//! (`DGEMM_KC`) and sgemm's rule for packing only A (`SGEMM_PACK_A_ONLY`).
//!
//! **Tested on hardware, not in CI**: CI and the development machines have no AMX and
//! run the tile program on the software model (`kernels/sapphirerapids/model.rs`,
//! `tests/amx_model.rs`). Session 29 was lent a 16-core KVM guest of an AMX Xeon (family 6,
//! model 207), where the testsuite passed for this configuration (16 380 tests, 1, 16 and
//! 1.1.2.4.2 threads) and these blocksizes were measured (`docs/Performance.md`, "AMX on
//! hardware"): KC = 1024 and MC = 256 for all three pairs. At 1024³ on one thread they gave
//! bf16 851 GFLOPS and i8 1383 GOPS, against 356 and 477–959 (two runs) with the KC = 256
//! (bf16) / 512 (int8), MC = 1024 first chosen on paper; KC = 2048 was level or better for
//! bf16 and behind for i8. A bf16 B micropanel (32 × 1024 × 2 bytes) no longer fits L1, and
//! it was faster all the same: a long k loop spreads the per-call C update over more dot
//! products (why L1 did not matter more was not measured). MC = 256 keeps the packed A block
//! (512 KiB of bf16) in a quarter of the 2 MiB L2.
//!
//! Session 30 found the hardware bf16 kernel equal to the model bit for bit
//! (`tests/amx_model.rs`).
//! Before any tile instruction the process asks Linux for the tile state
//! (`config/amx_permission.rs`), once, when the configurations are first looked at; if Linux
//! refuses, this configuration is unusable, the runtime report says why, and skx is chosen.

use std::sync::OnceLock;

use crate::cntx::{Blocksizes, Cntx, GemmKernel, PackAOnly, SupLimits};
use crate::config::{Features, SubConfig, skx};
use crate::kernels::sapphirerapids::{
    AMX_HW_CONTEXT, gemm_b16_amx_32x32, gemm_i8_amx_32x32, gemm_u8i8_amx_32x32,
};

/// The `sapphirerapids` sub-configuration.
pub const SAPPHIRERAPIDS: SubConfig = SubConfig {
    name: "sapphirerapids",
    requires: skx::SKX
        .requires
        .union(Features::AMX_TILE)
        .union(Features::AMX_BF16)
        .union(Features::AMX_INT8),
    context,
    os_check: Some(tile_permission),
};

/// Linux's permission for AMX tile data, requested at most once per process.
fn tile_permission() -> Result<(), String> {
    static ANSWER: OnceLock<Result<(), String>> = OnceLock::new();
    ANSWER.get_or_init(request).clone()
}

#[cfg(target_os = "linux")]
fn request() -> Result<(), String> {
    use crate::config::amx_permission::{arch_prctl, request_tile_permission};
    request_tile_permission(arch_prctl)
}

#[cfg(not(target_os = "linux"))]
fn request() -> Result<(), String> {
    Err("oxblis asks for AMX tile permission on Linux only".into())
}

fn context() -> Cntx {
    let block = |kc| Blocksizes {
        mr: 32,
        nr: 32,
        kc,
        mc: 256,
        nc: 4096,
    };
    // SAFETY: the three kernels implement GemmUkr for 32×32 tiles in the (32, 2) and (64, 4)
    // k-grouped layouts, with AMX_HW_CONTEXT loading their tile configuration on each thread;
    // this configuration requires AMX-TILE, AMX-BF16, AMX-INT8 and AVX-512 F, and is only
    // used once Linux granted the tile state (os_check).
    let (bgemm, igemm, ugemm) = unsafe {
        (
            GemmKernel::new(
                "sapphirerapids_b16_amx_32x32",
                gemm_b16_amx_32x32,
                true,
                block(1024),
            )
            .with_k_groups(32, 2)
            .with_hw_context(AMX_HW_CONTEXT),
            GemmKernel::new(
                "sapphirerapids_i8_amx_32x32",
                gemm_i8_amx_32x32,
                true,
                block(1024),
            )
            .with_k_groups(64, 4)
            .with_hw_context(AMX_HW_CONTEXT),
            GemmKernel::new(
                "sapphirerapids_u8i8_amx_32x32",
                gemm_u8i8_amx_32x32,
                true,
                block(1024),
            )
            .with_k_groups(64, 4)
            .with_hw_context(AMX_HW_CONTEXT),
        )
    };
    let skx = (skx::SKX.context)();
    let d = skx.dgemm.blocksizes();
    let sgemm = match skx.sgemm.sup().copied() {
        Some(sup) => skx.sgemm.with_sup(sup.with_limits(SupLimits {
            pack_a_only: SGEMM_PACK_A_ONLY,
            ..sup.limits()
        })),
        None => skx.sgemm,
    };
    Cntx {
        name: "sapphirerapids",
        sgemm,
        dgemm: skx.dgemm.with_cache_blocks(DGEMM_KC, d.mc, d.nc),
        bgemm,
        igemm,
        ugemm,
        ..skx
    }
}

/// dgemm's k block on these Xeons: 512, where skx (tuned on a Zen 4 with 1 MiB of L2) has 768.
/// With skx's 768, k up to 1024 runs as one slice (`cache_blocks` takes up to a third more),
/// and the packed A block (MC 256 × 1024 × 8 bytes) fills the whole 2 MiB L2: dgemm 1024³
/// read 0.67–0.79 of OpenBLAS's SkylakeX kernels in six runs (NN, TN, NT). KC 512 keeps the
/// A block at 1 MiB. Measured on the lent 16-vCPU Xeon (family 6 model 207), session 51, one
/// thread, `blasbench --interleave call`, ratio to OpenBLAS, KC 768 → 512 (MC 256): 768³
/// 0.94 → 1.01, 1024³ 0.71 → 1.06 (TN 0.69 → 1.06), 1280³ 0.94 → 0.92, 2048³ 0.87 → 0.92
/// (TN 0.94 → 0.97); dgemm 2048³ on 4 threads 0.76 → 0.88, on 8 0.95 → 1.03. As built, in a
/// slower run: 768³ 0.83 → 0.93, 1024³ 0.67 → 0.88, 3072³ 0.73 → 0.81, but 2048³ 0.77 → 0.71
/// (docs/Performance.md, "The lent Xeon again"). KC 384 / MC 240, 512 / 192 and 384 / 320
/// read within a few per cent of 512 / 256; A blocks of 1.5 MiB (512 / 384, 384 / 480) lost
/// up to a quarter at 512³ and 2048³.
const DGEMM_KC: usize = 512;

/// sgemm past the sup limits takes the loop nest on these Xeons: packing only A and reading B
/// in place with the sup kernel (skx's rule where B's columns spread over the L1) lost to it.
/// Measured on the lent Xeon, session 51, one thread, `blasbench --interleave call`, ratio to
/// OpenBLAS, skx's rule → the loop nest, three runs: 1000³ 0.93 → 0.93, 1200³ 0.93 → 0.99
/// and 0.89 → 0.95, 1536³ 0.88 → 0.99, 0.94 → 1.01 and 0.96 → 0.96, 1800³ 0.94 → 1.00 and
/// 0.92 → 0.97, 2200³ 0.91 → 0.98, 2500³ 0.97 → 0.94 and 0.92 → 0.96, 3000³ 0.89 → 0.95.
/// A fourth, quieter run of this build: 1200³ 0.99 → 0.97, 1536³ 1.00 → 0.99, 1800³
/// 0.93 → 0.96, so where the machine is quiet the gain is small (docs/Performance.md, "The
/// lent Xeon again"). dgemm keeps skx's rule: the loop nest lost there (1200³ 1.00 → 0.96,
/// 1536³ 0.94 → 0.86).
const SGEMM_PACK_A_ONLY: PackAOnly = PackAOnly::Never;

#[cfg(test)]
mod tests {
    use super::*;

    /// Building the context runs no tile instruction, so this runs on any x86 machine.
    #[test]
    fn differs_from_skx_in_the_tile_kernels_dgemm_kc_and_sgemm_pack_a_only() {
        let (spr, skx) = (context(), (skx::SKX.context)());
        spr.validate().unwrap();
        assert_eq!(spr.name, "sapphirerapids");
        let (d, skx_d) = (spr.dgemm.blocksizes(), skx.dgemm.blocksizes());
        assert_eq!(
            d,
            Blocksizes {
                kc: DGEMM_KC,
                ..skx_d
            }
        );
        assert_ne!(skx_d.kc, DGEMM_KC, "else the override is dead");
        let sup = |c: &Cntx| c.sgemm.sup().unwrap().limits();
        assert_eq!(
            sup(&spr),
            SupLimits {
                pack_a_only: SGEMM_PACK_A_ONLY,
                ..sup(&skx)
            }
        );
        assert_ne!(sup(&skx).pack_a_only, SGEMM_PACK_A_ONLY);
        assert_eq!(spr.sgemm.blocksizes(), skx.sgemm.blocksizes());
        assert_eq!(spr.sgemm.name(), skx.sgemm.name());
        assert_eq!(
            spr.dgemm.sup().unwrap().limits(),
            skx.dgemm.sup().unwrap().limits()
        );
        assert_eq!(spr.bgemm.name(), "sapphirerapids_b16_amx_32x32");
    }
}
