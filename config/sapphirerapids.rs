//! `sapphirerapids`: Xeons with AMX (Sapphire Rapids and later), chosen by CPU features and
//! Linux's permission for tile data. The skx context with AMX tile kernels for the three
//! low-precision pairs: bf16 × bf16 → f32 (`tdpbf16ps`), i8 × i8 and u8 × i8 → i32
//! (`tdpbssd`, `tdpbusd`); f32, f64 and complex stay on the AVX-512 kernels.
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

use crate::cntx::{Blocksizes, Cntx, GemmKernel};
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
    Cntx {
        name: "sapphirerapids",
        bgemm,
        igemm,
        ugemm,
        ..(skx::SKX.context)()
    }
}
