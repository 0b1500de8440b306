//! bf16 × bf16 → f32 AMX microkernel (`tdpbf16ps`): C := alpha·Ap·Bp + beta·C on a 32×32
//! f32 tile, from the shared tile program (`tile_program.rs`, which draws the tile plan).
//!
//! * dtypes: A and B bf16; C, alpha, beta f32. MR×NR = 32×32.
//! * Packed layout: `GemmKernel::with_k_groups(32, 2)`: per 32 values of k, A holds 32
//!   rows × 32 bf16 (one 64-byte tile row per row of C), B 16 pair-rows × 32 columns × 2
//!   bf16 (`b[q·64 + j·2 + r]`); k padded with zeros to a multiple of 32. KC must be a
//!   multiple of 32.
//! * Per 32 k: 4 tile loads, 4 `tdpbf16ps` (16·16·32 multiply-adds each).
//! * Rounding (the SDM's): within one `tdpbf16ps`, even and odd elements of the pairs
//!   accumulate in two f32 chains over the 32 k values (FMA, round to nearest even), which
//!   are added and then added to C; bf16 denormal inputs read as zero, denormal results
//!   flush to zero. Within f32's error bound for gemm.
//! * Two instantiations: [`gemm_b16_amx_32x32`] (the instructions; needs AMX-TILE and
//!   AMX-BF16, plus AVX-512 F for the epilogue, all present on every AMX CPU, and the
//!   configuration loaded by [`super::AMX_HW_CONTEXT`]) and [`gemm_b16_amx_32x32_model`]
//!   (the software model, any x86-64, with [`super::AMX_MODEL_CONTEXT`]). The hardware one
//!   ran on an AMX machine in session 29; CI runs the model.

use crate::kernels::GemmUkrArgs;
use crate::types::bf16;

use super::amx::Amx;
use super::model::TileModel;
use super::tile_program::{Dot, tile_program, transpose_by_blocks, transpose_by_elements};

/// The kernel on the AMX hardware. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×32 tiles in the layout above (`args.k` a
/// multiple of 32), on a CPU with AMX-TILE, AMX-BF16 and AVX-512 F whose OS granted this
/// process the tile state, on a thread where [`super::AMX_HW_CONTEXT`] is set.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_b16_amx_32x32(args: &GemmUkrArgs<bf16, bf16>) {
    // SAFETY: passed on to the caller.
    unsafe { tile_program::<Amx, bf16, bf16>(args, Dot::Bf16, transpose_by_blocks) }
}

/// The same kernel on the software model of the tile unit. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×32 tiles in the layout above (`args.k` a
/// multiple of 32). The model panics (the hardware would fault) unless
/// [`super::AMX_MODEL_CONTEXT`] is set on this thread.
pub unsafe fn gemm_b16_amx_32x32_model(args: &GemmUkrArgs<bf16, bf16>) {
    // SAFETY: passed on to the caller; the model checks the tile state itself.
    unsafe { tile_program::<TileModel, bf16, bf16>(args, Dot::Bf16, transpose_by_elements) }
}
