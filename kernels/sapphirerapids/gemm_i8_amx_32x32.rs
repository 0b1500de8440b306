//! int8 AMX microkernels: i8 × i8 → i32 (`tdpbssd`) and u8 × i8 → i32 (`tdpbusd`), C :=
//! alpha·Ap·Bp + beta·C on a 32×32 tile of wrapping i32, from the shared tile program
//! (`tile_program.rs`, which draws the tile plan).
//!
//! * dtypes: A i8 or u8, B i8; C, alpha, beta [`crate::types::I32Acc`] (arithmetic modulo
//!   2^32). MR×NR = 32×32.
//! * Packed layout: `GemmKernel::with_k_groups(64, 4)`: per 64 values of k, A holds 32 rows
//!   × 64 bytes (one tile row per row of C), B 16 quad-rows × 32 columns × 4 bytes
//!   (`b[q·128 + j·4 + r]`); k padded with zeros to a multiple of 64. KC must be a multiple
//!   of 64.
//! * Per 64 k: 4 tile loads, 4 `tdpbssd` / `tdpbusd` (16·16·64 multiply-adds each). Each
//!   pair has its own instruction, so unlike the VNNI i8 × i8 kernel no bias correction is
//!   needed. Exact: every sum wraps modulo 2^32, as the epilogue does.
//! * Two instantiations each: [`gemm_i8_amx_32x32`] / [`gemm_u8i8_amx_32x32`] (the
//!   instructions; need AMX-TILE and AMX-INT8, plus AVX-512 F for the epilogue, and the
//!   configuration loaded by [`super::AMX_HW_CONTEXT`]) and the `_model` ones (the software
//!   model, with [`super::AMX_MODEL_CONTEXT`]). The hardware ones ran on an AMX machine
//!   in session 29; CI runs the model.

use crate::kernels::GemmUkrArgs;

use super::amx::Amx;
use super::model::TileModel;
use super::tile_program::{Dot, tile_program, transpose_by_blocks, transpose_by_elements};

/// The kernel on the AMX hardware. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×32 tiles in the layout above (`args.k` a
/// multiple of 64), on a CPU with AMX-TILE, AMX-INT8 and AVX-512 F whose OS granted this
/// process the tile state, on a thread where [`super::AMX_HW_CONTEXT`] is set.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_i8_amx_32x32(args: &GemmUkrArgs<i8, i8>) {
    // SAFETY: passed on to the caller.
    unsafe { tile_program::<Amx, i8, i8>(args, Dot::SignedBytes, transpose_by_blocks) }
}

/// The same kernel on the software model of the tile unit. See the module docs.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×32 tiles in the layout above (`args.k` a
/// multiple of 64). The model panics (the hardware would fault) unless
/// [`super::AMX_MODEL_CONTEXT`] is set on this thread.
pub unsafe fn gemm_i8_amx_32x32_model(args: &GemmUkrArgs<i8, i8>) {
    // SAFETY: passed on to the caller; the model checks the tile state itself.
    unsafe { tile_program::<TileModel, i8, i8>(args, Dot::SignedBytes, transpose_by_elements) }
}

/// The u8 × i8 kernel on the AMX hardware. See the module docs.
///
/// # Safety
/// As [`gemm_i8_amx_32x32`], with A's panels of u8.
#[target_feature(enable = "avx512f")]
pub unsafe fn gemm_u8i8_amx_32x32(args: &GemmUkrArgs<u8, i8>) {
    // SAFETY: passed on to the caller.
    unsafe { tile_program::<Amx, u8, i8>(args, Dot::UnsignedBySignedBytes, transpose_by_blocks) }
}

/// The u8 × i8 kernel on the software model of the tile unit. See the module docs.
///
/// # Safety
/// As [`gemm_i8_amx_32x32_model`], with A's panels of u8.
pub unsafe fn gemm_u8i8_amx_32x32_model(args: &GemmUkrArgs<u8, i8>) {
    // SAFETY: passed on to the caller; the model checks the tile state itself.
    unsafe {
        tile_program::<TileModel, u8, i8>(args, Dot::UnsignedBySignedBytes, transpose_by_elements)
    }
}
