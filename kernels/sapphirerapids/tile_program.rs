//! The 32×32 tile program shared by the AMX kernels, written once against [`TileUnit`]:
//! its tile plan, its tile configuration, the per-thread [`HwContext`]s that load it, and the
//! epilogue that applies alpha and beta.
//!
//! **Tile plan** (all eight tiles 16 rows × 64 bytes, [`KERNEL_TILE_CONFIG`]):
//!
//! ```text
//!              B0 = tmm6     B1 = tmm7        (16 k-groups × 16 columns each)
//!            ┌────────────┬────────────┐
//! A0 = tmm4  │ C00 = tmm0 │ C01 = tmm1 │      rows 0..16 of C
//! A1 = tmm5  │ C10 = tmm2 │ C11 = tmm3 │      rows 16..32 of C
//!            └────────────┴────────────┘
//!              cols 0..16   cols 16..32
//! ```
//!
//! C's 32×32 accumulator (f32 or i32) lives in tmm0..3 for the whole call. Per k step (one
//! tile depth: 32 bf16 or 64 i8, i.e. 64 bytes of each A row) the program loads A0, A1 (16
//! rows × 64 bytes each), B0, B1 (16 k-group rows × 64 bytes each) and issues four dot
//! products, each tile of A and B used twice.
//!
//! **Packed layouts** (`GemmKernel::with_k_groups(g_a, g_b)`: bf16 (32, 2), i8 (64, 4); k
//! padded to a multiple of g_a). Per k step, with `e` the element size:
//! * A: 32 rows × g_a consecutive k values (`a[i·g_a + p]`): A0 is rows 0..16 at stride 64
//!   bytes, A1 starts 16·64 bytes later. 2048 bytes per step.
//! * B: g_a/g_b k-group rows, each NR = 32 columns × g_b consecutive k values
//!   (`b[q·32·g_b + j·g_b + r]`, 128 bytes per row): B0 is columns 0..16 (the first 64
//!   bytes of each row, stride 128), B1 columns 16..32 (64 bytes further). 2048 bytes per
//!   step. This is exactly the VNNI layout `tdpbf16ps`/`tdpbssd` read: B row k holds, for
//!   each column n, the pair (quad) that meets A's pair (quad) k.
//!
//! **Epilogue:** the four C tiles are stored to a 32×32 row-major stack buffer, then
//! C := alpha·acc + beta·C element by element with any strides (beta == 0: C is not read;
//! i32 arithmetic wraps).

use crate::cntx::HwContext;
use crate::kernels::GemmUkrArgs;
use crate::types::{Element, Scalar};

use super::amx::Amx;
use super::model::TileModel;
use super::tile::{BYTES_PER_ROW, TileConfig, TileUnit};

/// Rows of the kernels' C tile.
pub const MR: usize = 32;
/// Columns of the kernels' C tile.
pub const NR: usize = 32;

/// The kernels' tile configuration: palette 1, all eight tiles 16 rows × 64 bytes.
pub const KERNEL_TILE_CONFIG: TileConfig = TileConfig::FULL;

// The tile plan: which register holds what.
const C00: u8 = 0;
const C01: u8 = 1;
const C10: u8 = 2;
const C11: u8 = 3;
const A0: u8 = 4;
const A1: u8 = 5;
const B0: u8 = 6;
const B1: u8 = 7;

/// Rows per tile.
const TILE_ROWS: usize = 16;
/// Bytes of A or B one k step consumes: 32 rows (columns) × 64 bytes.
const STEP_BYTES: usize = MR * BYTES_PER_ROW;
/// Row stride of a B tile in the packed panel: NR columns × 4 bytes of one k group.
const B_ROW_BYTES: isize = (NR * 4) as isize;

/// Which dot-product instruction the program issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dot {
    /// `tdpbf16ps`: bf16 pairs → f32.
    Bf16,
    /// `tdpbssd`: i8 quads × i8 quads → i32.
    SignedBytes,
    /// `tdpbusd`: u8 quads (A) × i8 quads (B) → i32.
    UnsignedBySignedBytes,
}

/// `C += A·B` with the instruction `dot`, on tiles named at compile time.
///
/// # Safety
/// [`TileUnit`]'s contract.
#[inline(always)]
unsafe fn dot<U: TileUnit, const C: u8, const A: u8, const B: u8>(dot: Dot) {
    // SAFETY: passed on to the caller.
    unsafe {
        match dot {
            Dot::Bf16 => U::dpbf16ps::<C, A, B>(),
            Dot::SignedBytes => U::dpbssd::<C, A, B>(),
            Dot::UnsignedBySignedBytes => U::dpbusd::<C, A, B>(),
        }
    }
}

/// A 32×32 buffer of the accumulator type, aligned for tile stores.
#[repr(C, align(64))]
struct Accumulator<S>([S; MR * NR]);

/// The kernel: C := alpha·Ap·Bp + beta·C on a 32×32 tile, computed by the tile unit `U`
/// with the dot-product instruction `dot`.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×32 tiles in the k-grouped layout above
/// (`args.k` a multiple of 64 bytes' worth of `E`), on a thread where
/// [`KERNEL_TILE_CONFIG`] is loaded on `U` (the kernels' [`HwContext`]), and `dot` must
/// match the operand types (bf16 with `Dot::Bf16`, i8 × i8 with `Dot::SignedBytes`, u8 × i8
/// with `Dot::UnsignedBySignedBytes`).
#[inline(always)]
pub(super) unsafe fn tile_program<U, E, F>(args: &GemmUkrArgs<E, F>, dot_op: Dot)
where
    U: TileUnit,
    E: Element,
    F: Element<Acc = E::Acc>,
{
    const {
        assert!(size_of::<E::Acc>() == 4 && BYTES_PER_ROW.is_multiple_of(size_of::<E>()));
        assert!(size_of::<E>() == size_of::<F>());
    };
    let k_step = BYTES_PER_ROW / size_of::<E>();
    debug_assert!(args.k.is_multiple_of(k_step));
    let mut acc = Accumulator([E::Acc::zero(); MR * NR]);
    // SAFETY: the configuration is loaded (caller's promise) with all eight tiles 16×64.
    // Per k step, A0/A1 read 16 rows of 64 bytes at stride 64 from `a` and `a + 1024`, and
    // B0/B1 16 rows of 64 bytes at stride 128 from `b` and `b + 64`: exactly the 2048
    // bytes each panel holds per step, and the contract gives k/k_step steps of both. The
    // stores write 16 rows of 64 bytes at stride 128 bytes into the 4096-byte buffer, at
    // offsets 0, 64, 2048 and 2112: all inside it. The dot products use distinct tiles.
    unsafe {
        U::zero::<C00>();
        U::zero::<C01>();
        U::zero::<C10>();
        U::zero::<C11>();
        let (mut a, mut b) = (args.a.cast::<u8>(), args.b.cast::<u8>());
        for _ in 0..args.k / k_step {
            U::load::<A0>(a, BYTES_PER_ROW as isize);
            U::load::<B0>(b, B_ROW_BYTES);
            U::load::<B1>(b.add(BYTES_PER_ROW), B_ROW_BYTES);
            dot::<U, C00, A0, B0>(dot_op);
            dot::<U, C01, A0, B1>(dot_op);
            U::load::<A1>(a.add(TILE_ROWS * BYTES_PER_ROW), BYTES_PER_ROW as isize);
            dot::<U, C10, A1, B0>(dot_op);
            dot::<U, C11, A1, B1>(dot_op);
            a = a.add(STEP_BYTES);
            b = b.add(STEP_BYTES);
        }
        let buf = acc.0.as_mut_ptr().cast::<u8>();
        let row_bytes = (NR * 4) as isize;
        U::store::<C00>(buf, row_bytes);
        U::store::<C01>(buf.add(BYTES_PER_ROW), row_bytes);
        U::store::<C10>(buf.add(TILE_ROWS * NR * 4), row_bytes);
        U::store::<C11>(buf.add(TILE_ROWS * NR * 4 + BYTES_PER_ROW), row_bytes);
    }
    // SAFETY: the contract gives a writable (and, unless beta == 0, readable) 32×32 tile
    // of C at `c` with strides rs_c, cs_c.
    unsafe { update_c(args, &acc.0) };
}

/// C := alpha·acc + beta·C for the row-major 32×32 `acc`; C is not read when beta == 0.
///
/// # Safety
/// Every `c + i·rs_c + j·cs_c` (i, j < 32) must be writable, and readable unless beta == 0.
#[inline(always)]
unsafe fn update_c<E: Element, F: Element>(args: &GemmUkrArgs<E, F>, acc: &[E::Acc; MR * NR]) {
    let (alpha, beta) = (args.alpha, args.beta);
    // Walk C along its smaller stride.
    let rows_inner = args.rs_c.unsigned_abs() <= args.cs_c.unsigned_abs();
    for outer in 0..MR {
        for inner in 0..NR {
            let (i, j) = if rows_inner {
                (inner, outer)
            } else {
                (outer, inner)
            };
            let ab = alpha * acc[i * NR + j];
            // SAFETY: (i, j) is inside the tile the caller vouches for.
            unsafe {
                let p = args
                    .c
                    .offset(i as isize * args.rs_c + j as isize * args.cs_c);
                *p = if beta.is_zero() { ab } else { ab + beta * *p };
            }
        }
    }
}

/// Loads [`KERNEL_TILE_CONFIG`] on the hardware.
///
/// # Safety
/// The CPU has AMX and the OS granted the tile state to this thread.
unsafe fn amx_set() {
    // SAFETY: the caller's promise.
    unsafe { Amx::load_config(&KERNEL_TILE_CONFIG) };
}

/// Releases the hardware tiles.
///
/// # Safety
/// As [`amx_set`].
unsafe fn amx_release() {
    // SAFETY: the caller's promise.
    unsafe { Amx::release() };
}

/// Loads [`KERNEL_TILE_CONFIG`] into the calling thread's model.
///
/// # Safety
/// None in fact (the model touches no memory here); `unsafe` for the [`HwContext`] type.
unsafe fn model_set() {
    // SAFETY: the model's ldtilecfg reads only the configuration it is given.
    unsafe { TileModel::load_config(&KERNEL_TILE_CONFIG) };
}

/// Returns the calling thread's model to its INIT state.
///
/// # Safety
/// None in fact; `unsafe` for the [`HwContext`] type.
unsafe fn model_release() {
    // SAFETY: the model's tilerelease touches only its own thread-local state.
    unsafe { TileModel::release() };
}

/// The per-thread context of the hardware kernels (`gemm_*_amx_32x32`): `ldtilecfg` of
/// [`KERNEL_TILE_CONFIG`] before a thread's first kernel call, `tilerelease` after its last.
/// Only sound where the CPU has AMX-TILE and the OS granted XTILEDATA to the process.
pub const AMX_HW_CONTEXT: HwContext = HwContext {
    set: amx_set,
    release: amx_release,
};

/// The per-thread context of the model kernels (`gemm_*_amx_32x32_model`): loads
/// [`KERNEL_TILE_CONFIG`] into the thread's [`TileModel`] and releases it.
pub const AMX_MODEL_CONTEXT: HwContext = HwContext {
    set: model_set,
    release: model_release,
};
