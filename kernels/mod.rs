//! Microkernels, one folder per kernel set, and the contract they all implement.
//!
//! A gemm microkernel computes one MR×NR tile of C from one packed micropanel of A and one
//! of B:
//!
//! ```text
//!     C[0..MR, 0..NR] := alpha · Ap · Bp + beta · C[0..MR, 0..NR]
//! ```
//!
//! * `Ap` is MR×k, packed column after column: `a[p*MR + i]` is row i of column p.
//! * `Bp` is k×NR, packed row after row: `b[p*NR + j]` is column j of row p.
//! * C is addressed with the strides given (`c + i*rs_c + j*cs_c`); a kernel must accept any
//!   strides and is fastest for its preferred storage (`GemmKernel::prefers_rows`).
//! * **beta == 0 means C is not read**: NaN or Inf in C is overwritten, not propagated.
//! * The tile is always full: the framework zero-pads packed panels and routes edge tiles
//!   to the configuration's sup kernel (or, without one, through a scratch tile), so a
//!   packed kernel has no edge cases.
//! * `a_next` / `b_next` point at the micropanels the next call will use (for prefetching;
//!   they may equal `a` / `b` and must never be dereferenced past their panels).
//!
//! The full contract, with drawings, is `docs/KernelsHowTo.md`.

use crate::types::Element;

#[cfg(target_arch = "x86_64")]
pub mod haswell;
pub mod reference;
#[cfg(target_arch = "x86_64")]
pub mod sapphirerapids;
#[cfg(target_arch = "x86_64")]
pub mod skx;
#[cfg(target_arch = "x86_64")]
mod x86;

/// The largest tile (MR·NR) a kernel may declare; the framework's scratch tile for edges
/// lives on the stack and is this big.
pub const MAX_TILE_ELEMS: usize = 1024;

/// Arguments of one microkernel call (see the module docs for their meaning).
#[derive(Debug)]
pub struct GemmUkrArgs<A: Element, B: Element> {
    /// Depth of the update: columns of `a`, rows of `b`.
    pub k: usize,
    /// Scale of the product.
    pub alpha: A::Acc,
    /// Packed MR×k micropanel of A.
    pub a: *const A,
    /// Packed k×NR micropanel of B.
    pub b: *const B,
    /// Scale of C's old value; 0 means C is write-only.
    pub beta: A::Acc,
    /// Element (0, 0) of the MR×NR tile of C.
    pub c: *mut A::Acc,
    /// Row stride of C, in elements.
    pub rs_c: isize,
    /// Column stride of C, in elements.
    pub cs_c: isize,
    /// The A micropanel of the next call, for prefetching.
    pub a_next: *const A,
    /// The B micropanel of the next call, for prefetching.
    pub b_next: *const B,
}

/// A gemm microkernel.
///
/// # Safety (for callers)
/// `a` must point at `MR*k` readable elements, `b` at `k*NR`, and every `c + i*rs_c +
/// j*cs_c` (`i < MR`, `j < NR`) must be writable (and readable unless `beta == 0`), with
/// MR and NR those the kernel was registered with; the CPU must have the features of the
/// configuration that registered it.
pub type GemmUkr<A, B> = unsafe fn(&GemmUkrArgs<A, B>);

/// Arguments of a sup ("small, unpacked") microkernel call: one tile of C computed from A
/// and B read in place, for problems too small to repay packing.
///
/// The tile is `m`×`n` with `1 <= m <= MR` and `1 <= n <= NR`: the kernel handles edges
/// itself, and must not touch rows of A or C at or past `m`, nor columns of B or C at or
/// past `n`. A has unit row stride (the driver copies it when it has not): A(i, p) is at
/// `a + i + p*cs_a`. B(p, j) is at `b + p*rs_b + j*cs_b`, any strides. beta == 0 means C is
/// not read.
#[derive(Debug, Clone, Copy)]
pub struct SupUkrArgs<A: Element, B: Element> {
    /// Rows of this tile (1..=MR).
    pub m: usize,
    /// Columns of this tile (1..=NR).
    pub n: usize,
    /// Depth.
    pub k: usize,
    /// Scale of the product.
    pub alpha: A::Acc,
    /// A(0, 0); column p starts at `a + p*cs_a` and is contiguous.
    pub a: *const A,
    /// Column stride of A.
    pub cs_a: isize,
    /// B(0, 0).
    pub b: *const B,
    /// Row stride of B.
    pub rs_b: isize,
    /// Column stride of B.
    pub cs_b: isize,
    /// Scale of C's old value; 0 means C is write-only.
    pub beta: A::Acc,
    /// C(0, 0) of the tile.
    pub c: *mut A::Acc,
    /// Row stride of C.
    pub rs_c: isize,
    /// Column stride of C.
    pub cs_c: isize,
}

/// A sup microkernel.
///
/// # Safety (for callers)
/// Every element of A, B and C the [`SupUkrArgs`] describe (rows below `m`, columns below
/// `n`, depth below `k`) must be valid (C writable, and readable unless `beta == 0`), with
/// `m`, `n` within the MR×NR the kernel was registered with; the CPU must have the features
/// of the configuration that registered it.
pub type SupUkr<A, B> = unsafe fn(&SupUkrArgs<A, B>);

/// Arguments of a tall-A kernel call: m rows (any number; the kernel goes down them one tile
/// of MR rows at a time, the last tile possibly shorter) by n ≤ NT columns of C, for a
/// product whose C has few columns and whose A is large (`frame/l3/tall.rs`), over one k
/// block:
///
/// ```text
///     C[0..m, 0..n] := alpha · A[0..m, 0..k] · Bp[0..k, 0..n] + beta · C[0..m, 0..n]
/// ```
///
/// Tile t (rows t·MR..) of C starts at `c + t*c_tile_stride`, and its element (i, j) lies
/// `i*rs_c + j*cs_c` further on: C in place has `c_tile_stride = MR*rs_c`, a tile-major
/// scratch `MR*W`. How one tile's sum is rounded (C added first or last) is the kernel's
/// own, the same on every call with the same arguments.
///
/// A is read in place: unit row stride, A(i, p) at `a + i + p*cs_a`; rows at or past `m` are
/// not read. `Bp` is packed k×W row after row, `b[p*W + j]`, W = [`tall_packed_width`]`(n,
/// NT)` (the driver zero-fills columns n..W); the kernel computes W columns and stores only
/// the first `n` of C. While it works through column p of A for tile t it prefetches column
/// p at `a_prefetch + t*MR` (`+ p*cs_a`): the driver points it at a later tile's rows so
/// memory streams while the kernel computes. It is a hint, never dereferenced, and may lie
/// outside A. beta == 0 means C is not read.
#[derive(Debug, Clone, Copy)]
pub struct TallUkrArgs<A: Element, B: Element> {
    /// Rows of C (≥ 1): tiles of MR rows, the last one possibly shorter.
    pub m: usize,
    /// Columns of C to store (1..=NT).
    pub n: usize,
    /// Depth of this k block.
    pub k: usize,
    /// Scale of the product.
    pub alpha: A::Acc,
    /// A(0, 0); column p starts at `a + p*cs_a` and is contiguous.
    pub a: *const A,
    /// Column stride of A.
    pub cs_a: isize,
    /// Packed k×NT B.
    pub b: *const B,
    /// Scale of C's old value; 0 means C is write-only.
    pub beta: A::Acc,
    /// C(0, 0) of the tile.
    pub c: *mut A::Acc,
    /// Row stride of C.
    pub rs_c: isize,
    /// Column stride of C.
    pub cs_c: isize,
    /// From one tile's C(0, 0) to the next's, in elements.
    pub c_tile_stride: isize,
    /// Where to prefetch A from (column stride `cs_a`); a hint only.
    pub a_prefetch: *const A,
}

/// The width W of a tall-A kernel's packed B for C of `n` columns (1 ≤ n ≤ `nt`): the
/// smallest of 2, 4, 8, 16, … that holds n, or `nt` where that power of two is larger (skx:
/// NT = 24, so 17–24 columns take 24). A kernel computes W columns, not
/// its whole NT, so that narrow C does not pay for FMAs on zero columns: with W = NT = 16,
/// dgemm 1000×4×1000 (A from L3) ran at 14 GFLOPS, with W = 4 at 40 (docs/Performance.md).
/// Powers of two keep the kernels to a few instantiations.
pub const fn tall_packed_width(n: usize, nt: usize) -> usize {
    let w = n.next_power_of_two();
    if w < 2 {
        2
    } else if w > nt {
        nt
    } else {
        w
    }
}

/// A tall-A kernel.
///
/// # Safety (for callers)
/// A's rows below `m` and columns below `k` must be readable, `b` must point at `k*W`
/// readable elements, every tile's C rows and columns below `n` (as the tile stride and
/// strides place them) writable (and readable unless `beta == 0`) and apart from each other,
/// with `n` within the NT the kernel was registered with; the CPU must have the features of
/// the configuration that registered it.
pub type TallUkr<A, B> = unsafe fn(&TallUkrArgs<A, B>);

/// Arguments of a gemv kernel call: y := alpha·op(A)·x + beta·y for the degenerate gemm
/// shapes (C with one column; one row is solved as its transpose), which are bound by memory
/// and want A streamed once in order rather than packed.
///
/// A(i, p) is at `a + i*rs_a + p*cs_a` (m×k, any strides), x(p) at `x + p*inc_x`, y(i) at
/// `y + i*inc_y`; `conj_a` / `conj_x` ask for A's / x's elements to be conjugated (ignored for
/// real types). beta == 0 means y is not read.
#[derive(Debug)]
pub struct GemvUkrArgs<A: Element, B: Element> {
    /// Rows of A and y.
    pub m: usize,
    /// Columns of A, length of x.
    pub k: usize,
    /// Scale of the product.
    pub alpha: A::Acc,
    /// A(0, 0).
    pub a: *const A,
    /// Row stride of A.
    pub rs_a: isize,
    /// Column stride of A.
    pub cs_a: isize,
    /// Conjugate A's elements.
    pub conj_a: bool,
    /// x(0).
    pub x: *const B,
    /// Stride of x.
    pub inc_x: isize,
    /// Conjugate x's elements.
    pub conj_x: bool,
    /// Scale of y's old value; 0 means y is write-only.
    pub beta: A::Acc,
    /// y(0).
    pub y: *mut A::Acc,
    /// Stride of y.
    pub inc_y: isize,
}

/// A gemv kernel.
///
/// # Safety (for callers)
/// Every element the [`GemvUkrArgs`] describe must be valid (y writable, and readable unless
/// `beta == 0`), and the CPU must have the features of the configuration that registered it.
pub type GemvUkr<A, B> = unsafe fn(&GemvUkrArgs<A, B>);

/// The most columns one [`GemvColumnsUkr`] call takes.
pub const GEMV_COLUMNS_MAX: usize = 4;

/// A gemv kernel for a few columns at once: for each j < `n` (1 ≤ n ≤ [`GEMV_COLUMNS_MAX`]),
/// y_j := alpha·op(A)·x_j + beta·y_j, where x_j starts at `args.x + j·cs_x` and y_j at
/// `args.y + j·cs_y`, each with the args' `inc_x` / `inc_y`; everything else as
/// [`GemvUkr`]. The point is reading A once for all n columns where the layout allows it (C
/// with a few columns and an A that is not worth packing, `frame/l3/gemv.rs`).
///
/// # Safety (for callers)
/// As [`GemvUkr`], for each of the n columns; the y_j must not overlap each other, A or any
/// x_j.
pub type GemvColumnsUkr<A, B> =
    unsafe fn(args: &GemvUkrArgs<A, B>, n: usize, cs_x: isize, cs_y: isize);

/// The most rows of C a dots kernel call computes ([`DotsUkrArgs::m`]). Kernels whose
/// register file holds no block that tall make more than one pass over B.
pub const MAX_DOT_ROWS: usize = 8;

/// The longest k a dots kernel call takes when A's rows are not contiguous (it gathers them
/// into a buffer of its own first).
pub const MAX_DOT_GATHER_K: usize = 512;

/// Arguments of a dots kernel call: C (m×n) := alpha·A·B + beta·C with B's columns
/// contiguous along k, so that every element of C is the dot product of a row of A and a
/// contiguous column of B. For a short, wide C (a few rows), where a tile kernel's column
/// vectors would be mostly masked off (`frame/l3/dots.rs`).
///
/// A(i, p) is at `a + i*rs_a + p*cs_a`, B(p, j) at `b + p + j*cs_b`, C(i, j) at
/// `c + i*rs_c + j*cs_c`; `1 <= m <= MAX_DOT_ROWS`, `n` and `k` at least 1, and
/// `k <= MAX_DOT_GATHER_K` unless `cs_a == 1` (A's rows contiguous, read in place; others
/// are gathered first). beta == 0 means C is not read.
#[derive(Debug)]
pub struct DotsUkrArgs<A: Element, B: Element> {
    /// Rows of A and C, 1..=[`MAX_DOT_ROWS`].
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Length of each dot product: columns of A, rows of B.
    pub k: usize,
    /// Scale of the product.
    pub alpha: A::Acc,
    /// A(0, 0).
    pub a: *const A,
    /// Row stride of A.
    pub rs_a: isize,
    /// Column stride of A (1: rows contiguous).
    pub cs_a: isize,
    /// B(0, 0); B's columns are contiguous.
    pub b: *const B,
    /// Column stride of B.
    pub cs_b: isize,
    /// Scale of C's old value; 0 means C is write-only.
    pub beta: A::Acc,
    /// C(0, 0).
    pub c: *mut A::Acc,
    /// Row stride of C.
    pub rs_c: isize,
    /// Column stride of C.
    pub cs_c: isize,
}

/// A dots kernel.
///
/// # Safety (for callers)
/// Every element the [`DotsUkrArgs`] describe must be valid (C writable, and readable unless
/// `beta == 0`), with `m`, `n` and `k` in the ranges stated there, and the CPU must have the
/// features of the configuration that registered it.
pub type DotsUkr<A, B> = unsafe fn(&DotsUkrArgs<A, B>);

/// The longest k a short-k kernel call takes ([`ShortKUkrArgs::k`]).
pub const MAX_SHORT_K: usize = 16;

/// Arguments of a short-k kernel call: C (m×n) := alpha·A·B + beta·C for a product only a
/// few k steps deep, where a tile kernel spends most of each tile setting up and writing C
/// (`frame/l3/short_k.rs`). The kernel holds a strip of A's rows in registers and streams
/// B's columns past it.
///
/// A(i, p) is at `a + i*rs_a + p*cs_a`, B(p, j) at `b + p*rs_b + j*cs_b`, C(i, j) at
/// `c + i + j*cs_c` (C column-stored); `m`, `n` at least 1 and `1 <= k <= MAX_SHORT_K`.
/// beta == 0 means C is not read.
#[derive(Debug)]
pub struct ShortKUkrArgs<A: Element, B: Element> {
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Columns of A, rows of B: 1..=[`MAX_SHORT_K`].
    pub k: usize,
    /// Scale of the product.
    pub alpha: A::Acc,
    /// A(0, 0).
    pub a: *const A,
    /// Row stride of A (1: columns contiguous, read in place; others are gathered).
    pub rs_a: isize,
    /// Column stride of A.
    pub cs_a: isize,
    /// B(0, 0).
    pub b: *const B,
    /// Row stride of B.
    pub rs_b: isize,
    /// Column stride of B.
    pub cs_b: isize,
    /// Scale of C's old value; 0 means C is write-only.
    pub beta: A::Acc,
    /// C(0, 0); C's rows are adjacent.
    pub c: *mut A::Acc,
    /// Column stride of C.
    pub cs_c: isize,
}

/// A short-k kernel.
///
/// # Safety (for callers)
/// Every element the [`ShortKUkrArgs`] describe must be valid (C writable, and readable
/// unless `beta == 0`), C must not overlap A or B, `m`, `n` and `k` must be in the ranges
/// stated there, and the CPU must have the features of the configuration that registered it.
pub type ShortKUkr<A, B> = unsafe fn(&ShortKUkrArgs<A, B>);

/// A packing kernel: copies 8 rows of `cols` elements (1 ≤ `cols` ≤ 8) transposed,
/// `dst[p*ld_dst + i] = src[i*rs_src + p]` for `i < 8, p < cols`. Packing uses it wherever a
/// panel's source rows are contiguous along k (row-stored A, column-stored B: the TN and NN
/// cases), where a plain loop reads or writes against the grain: whole 8×8 blocks, and the
/// columns of k past the last whole block. Conjugation is not its business: the packer
/// applies it afterwards.
///
/// # Safety (for callers)
/// The 8 rows of `cols` elements at `src + i*rs_src` must be readable, the `cols` columns of
/// 8 elements at `dst + p*ld_dst` writable, the two regions disjoint, `cols` in 1..=8, and the
/// CPU must have the features of the configuration that registered the kernel. Nothing past
/// a row's `cols` elements is read, nor past the `cols` columns written.
pub type TransposeUkr<T> =
    unsafe fn(src: *const T, rs_src: isize, dst: *mut T, ld_dst: usize, cols: usize);
