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
//! **C in the tiles themselves** where that gives the same bits as the epilogue below: C's
//! rows contiguous (cs_c = 1, the layout the configuration asks the frame for), alpha = 1,
//! and either beta = 0 (the tiles start at zero and are stored straight to C) or, for the
//! i32 kernels, beta = 1 (the tiles are loaded from C: wrapping i32 addition gives the
//! same result in any order). bf16 → f32 with beta = 1 is left to the epilogue: the tile
//! unit reads denormal f32 accumulators as zero, which would lose a denormal C.
//!
//! **Epilogue** (everything else): the four C tiles are stored to a 32×32 row-major stack
//! buffer, then C := alpha·acc + beta·C (beta == 0: C is not read; i32 arithmetic wraps),
//! a row of 32 at a time where C's rows are contiguous (the compiler vectorizes it); where
//! its columns are, the buffer is first transposed ([`Transpose`]: 8×8 AVX blocks on the
//! hardware, element by element on the model) and C is updated a column of 32 at a time.
//! Column-stored C reaches the kernels when the frame cannot transpose the problem into the
//! rows they prefer: u8 × i8, whose operands cannot swap places. Any other strides go
//! element by element along C's smaller stride.
//!
//! Measured on hardware (an AMX Xeon, session 29, `docs/Performance.md`): with the
//! element-by-element epilogue on every call the kernels ran at 12–14 % of the tile unit's
//! peak, the epilogue costing about as much as the 32 dot products of a KC = 256 block.

use crate::cntx::HwContext;
use crate::kernels::GemmUkrArgs;
use crate::kernels::haswell::transpose_f32_8x8;
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

impl Dot {
    /// Whether the tile unit's accumulation gives C's bits whatever the order of the adds:
    /// true for wrapping i32, false for f32 (rounding, and denormal accumulators read as 0).
    fn accumulates_exactly(self) -> bool {
        !matches!(self, Dot::Bf16)
    }
}

/// A 32×32 buffer of the accumulator type, aligned for tile stores.
#[repr(C, align(64))]
struct Accumulator<S>([S; MR * NR]);

/// Transposes a 32×32 matrix of 4-byte elements, row-major at `src`, into `dst`
/// (`dst[j·32 + i] = src[i·32 + j]`), moving bits only.
///
/// # Safety
/// `src` readable and `dst` writable for 1024 elements, not overlapping; the CPU has the
/// implementation's features.
pub(super) type Transpose = unsafe fn(src: *const u32, dst: *mut u32);

/// [`Transpose`] element by element, for the model kernels (any x86-64).
///
/// # Safety
/// [`Transpose`]'s contract.
pub(super) unsafe fn transpose_by_elements(src: *const u32, dst: *mut u32) {
    for i in 0..MR {
        for j in 0..NR {
            // SAFETY: i·32 + j and j·32 + i are below 1024 (the contract's extent).
            unsafe { *dst.add(j * MR + i) = *src.add(i * NR + j) };
        }
    }
}

/// [`Transpose`] as sixteen 8×8 AVX block transposes, for the hardware kernels (every AMX
/// CPU has AVX).
///
/// # Safety
/// [`Transpose`]'s contract, on a CPU with AVX.
#[target_feature(enable = "avx")]
pub(super) unsafe fn transpose_by_blocks(src: *const u32, dst: *mut u32) {
    const BLOCK: usize = 8;
    for bi in (0..MR).step_by(BLOCK) {
        for bj in (0..NR).step_by(BLOCK) {
            // SAFETY: the block of rows bi.., columns bj.. of `src` (row stride 32) goes to
            // rows bj.., columns bi.. of `dst` (row stride 32): both inside the 1024
            // elements, and the f32 shuffles move bits without interpreting them.
            unsafe {
                transpose_f32_8x8(
                    src.add(bi * NR + bj).cast(),
                    NR as isize,
                    dst.add(bj * MR + bi).cast(),
                    MR,
                    BLOCK,
                )
            };
        }
    }
}

/// The kernel: C := alpha·Ap·Bp + beta·C on a 32×32 tile, computed by the tile unit `U`
/// with the dot-product instruction `dot`.
///
/// # Safety
/// The [`crate::kernels::GemmUkr`] contract for 32×32 tiles in the k-grouped layout above
/// (`args.k` a multiple of 64 bytes' worth of `E`), on a thread where
/// [`KERNEL_TILE_CONFIG`] is loaded on `U` (the kernels' [`HwContext`]), and `dot` must
/// match the operand types (bf16 with `Dot::Bf16`, i8 × i8 with `Dot::SignedBytes`, u8 × i8
/// with `Dot::UnsignedBySignedBytes`); the CPU has what `transpose` needs.
#[inline(always)]
pub(super) unsafe fn tile_program<U, E, F>(
    args: &GemmUkrArgs<E, F>,
    dot_op: Dot,
    transpose: Transpose,
) where
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
    let c_in_tiles = args.cs_c == 1
        && args.alpha.is_one()
        && (args.beta.is_zero() || (args.beta.is_one() && dot_op.accumulates_exactly()));
    // C's row stride in bytes, and the byte offsets of its right and lower 16×16 quarters.
    let c_rows = args.rs_c * 4;
    let (right, lower) = (BYTES_PER_ROW as isize, TILE_ROWS as isize * c_rows);
    if c_in_tiles {
        let c = args.c.cast::<u8>();
        // SAFETY: the configuration is loaded (caller's promise). With cs_c = 1 the tile's
        // row i is 32 contiguous 4-byte elements at c + i·rs_c, so each quarter is 16 rows
        // of 64 bytes at stride 4·rs_c from c, c + 64, c + 16·4·rs_c and that + 64: all
        // inside the 32×32 tile of C the contract gives, readable here since beta != 0
        // when it is loaded. The panels hold k / k_step steps (the contract), as k_loop
        // needs.
        unsafe {
            if args.beta.is_zero() {
                zero_c_tiles::<U>();
            } else {
                U::load::<C00>(c, c_rows);
                U::load::<C01>(c.offset(right), c_rows);
                U::load::<C10>(c.offset(lower), c_rows);
                U::load::<C11>(c.offset(lower + right), c_rows);
            }
            k_loop::<U>(args.a.cast(), args.b.cast(), args.k / k_step, dot_op);
            U::store::<C00>(c, c_rows);
            U::store::<C01>(c.offset(right), c_rows);
            U::store::<C10>(c.offset(lower), c_rows);
            U::store::<C11>(c.offset(lower + right), c_rows);
        }
        return;
    }
    let mut acc = Accumulator([E::Acc::zero(); MR * NR]);
    // SAFETY: the configuration is loaded (caller's promise) with all eight tiles 16×64.
    // The panels hold k / k_step steps (the contract), as k_loop needs. The stores write
    // 16 rows of 64 bytes at stride 128 bytes into the 4096-byte buffer, at offsets 0, 64,
    // 2048 and 2112: all inside it.
    unsafe {
        zero_c_tiles::<U>();
        k_loop::<U>(args.a.cast(), args.b.cast(), args.k / k_step, dot_op);
        let buf = acc.0.as_mut_ptr().cast::<u8>();
        let row_bytes = (NR * 4) as isize;
        U::store::<C00>(buf, row_bytes);
        U::store::<C01>(buf.add(BYTES_PER_ROW), row_bytes);
        U::store::<C10>(buf.add(TILE_ROWS * NR * 4), row_bytes);
        U::store::<C11>(buf.add(TILE_ROWS * NR * 4 + BYTES_PER_ROW), row_bytes);
    }
    // SAFETY: the contract gives a writable (and, unless beta == 0, readable) 32×32 tile
    // of C at `c` with strides rs_c, cs_c; the caller vouches for `transpose`.
    unsafe { update_c(args, &acc.0, transpose) };
}

/// Zeroes the four C tiles.
///
/// # Safety
/// [`TileUnit`]'s contract, with [`KERNEL_TILE_CONFIG`] loaded.
#[inline(always)]
unsafe fn zero_c_tiles<U: TileUnit>() {
    // SAFETY: passed on to the caller.
    unsafe {
        U::zero::<C00>();
        U::zero::<C01>();
        U::zero::<C10>();
        U::zero::<C11>();
    }
}

/// `steps` k steps of C += A·B on the C tiles, from packed panels at `a` and `b`.
///
/// # Safety
/// [`TileUnit`]'s contract, with [`KERNEL_TILE_CONFIG`] loaded; `a` and `b` hold `steps`
/// k steps of 2048 bytes each in the layout of the module docs. Per step A0/A1 read 16
/// rows of 64 bytes at stride 64 from `a` and `a + 1024`, B0/B1 16 rows of 64 bytes at
/// stride 128 from `b` and `b + 64`: exactly the step's 2048 bytes of each. The dot
/// products use distinct tiles.
#[inline(always)]
unsafe fn k_loop<U: TileUnit>(mut a: *const u8, mut b: *const u8, steps: usize, dot_op: Dot) {
    // SAFETY: passed on to the caller.
    unsafe {
        for _ in 0..steps {
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
    }
}

/// C := alpha·acc + beta·C for the row-major 32×32 `acc`; C is not read when beta == 0.
///
/// # Safety
/// Every `c + i·rs_c + j·cs_c` (i, j < 32) must be writable, and readable unless beta == 0;
/// the CPU has what `transpose` needs.
#[inline(always)]
unsafe fn update_c<E: Element, F: Element>(
    args: &GemmUkrArgs<E, F>,
    acc: &[E::Acc; MR * NR],
    transpose: Transpose,
) {
    const { assert!(size_of::<E::Acc>() == size_of::<u32>()) };
    if args.cs_c == 1 {
        // SAFETY: passed on; C's row i starts at c + i·rs_c with unit stride.
        unsafe { update_lines(args, acc, args.rs_c) };
        return;
    }
    if args.rs_c == 1 {
        let mut acc_t = Accumulator([E::Acc::zero(); MR * NR]);
        // SAFETY: both buffers hold 1024 elements of 4 bytes (asserted above) and are
        // distinct; the caller vouches for `transpose`.
        unsafe { transpose(acc.as_ptr().cast(), acc_t.0.as_mut_ptr().cast()) };
        // SAFETY: passed on; C's column j starts at c + j·cs_c with unit stride, and is
        // row j of `acc_t`.
        unsafe { update_lines(args, &acc_t.0, args.cs_c) };
        return;
    }
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

/// C := alpha·lines + beta·C, where line l of the 32×32 `lines` is the 32 contiguous
/// elements of C at `c + l·line_stride` (C's rows or its columns), the beta test hoisted
/// out so that the compiler vectorizes each line.
///
/// # Safety
/// As [`update_c`], for C's lines at that stride.
#[inline(always)]
unsafe fn update_lines<E: Element, F: Element>(
    args: &GemmUkrArgs<E, F>,
    lines: &[E::Acc; MR * NR],
    line_stride: isize,
) {
    let (alpha, beta) = (args.alpha, args.beta);
    for (l, acc_line) in lines.chunks_exact(NR).enumerate() {
        // SAFETY: line l is 32 consecutive elements inside the tile the caller vouches for;
        // C's elements are distinct (the API checks it; a scratch tile is dense), so lines
        // do not overlap, and nothing else refers to them during the call.
        let line =
            unsafe { std::slice::from_raw_parts_mut(args.c.offset(l as isize * line_stride), NR) };
        if beta.is_zero() {
            for (c, &ab) in line.iter_mut().zip(acc_line) {
                *c = alpha * ab;
            }
        } else {
            for (c, &ab) in line.iter_mut().zip(acc_line) {
                *c = alpha * ab + beta * *c;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX block transpose (the hardware kernels' epilogue, which only an AMX machine
    /// runs inside a kernel) against the element-by-element one, on bit patterns that f32
    /// arithmetic would change (signalling NaNs, denormals): only moves are allowed.
    #[test]
    fn block_transpose_moves_the_bits_of_every_element() {
        assert!(
            std::arch::is_x86_feature_detected!("avx"),
            "the test machine is expected to have AVX"
        );
        let src: Vec<u32> = (0..(MR * NR) as u32)
            .map(|x| x.wrapping_mul(0x9E37_79B9) ^ [0x7F80_0001, 0x0000_0001, 0][x as usize % 3])
            .collect();
        let (mut by_blocks, mut by_elements) = (vec![0u32; MR * NR], vec![0u32; MR * NR]);
        // SAFETY: 1024 elements each, distinct buffers; the CPU has AVX (asserted).
        unsafe {
            transpose_by_blocks(src.as_ptr(), by_blocks.as_mut_ptr());
            transpose_by_elements(src.as_ptr(), by_elements.as_mut_ptr());
        }
        for i in 0..MR {
            for j in 0..NR {
                assert_eq!(by_elements[j * MR + i], src[i * NR + j], "({i}, {j})");
            }
        }
        assert_eq!(by_blocks, by_elements);
    }
}
