//! The small/skinny path (BLIS's "sup"): the sup kernel reads B where it is, tile by tile,
//! on the calling thread; A too for problems too small to repay packing it ([`gemm_sup`]),
//! or packed block by block for larger ones whose B reads well in place
//! ([`gemm_sup_packed_a`]).
//!
//! ```text
//! gemm_sup:
//! pc: for each k block (all of k unless A is large: `SupLimits::k_block_bytes`)
//!   jr: for each NR-wide column panel of C and B
//!     ir: for each MR-tall row panel of C and A
//!           sup kernel: C[ir.., jr..] := alpha·A[ir.., pc..]·B[pc.., jr..] + beta'·C[ir.., jr..]
//!           (beta' = beta in the first k block, 1 after it)
//!
//! gemm_sup_packed_a: the loop nest's blocking, with B never packed
//! jc: for each NC-wide column block
//!   pc: for each KC-deep slice
//!     ic: for each MC-tall row block
//!           pack A[ic.., pc..] → Ap  (MR-tall panels, as the loop nest packs them)
//!       jr, ir: as above, A from Ap, B in place
//! ```
//!
//! The kernel loads each column of A as a vector, so A needs unit row stride and no pending
//! conjugation; otherwise `gemm_sup` first copies it, once, into a column-major buffer (m·k
//! elements, small by construction), or, on one thread, from
//! `SupLimits::a_by_blocks_min_copy_bytes` up, `gemm_front` hands the problem to
//! [`gemm_sup_a_by_blocks`], which packs it block by block in this path's own k slices (a
//! whole copy past the L2 was read back from L3). B is read in place with any strides: its elements are
//! broadcast. A conjugated B is copied too (conjugation applied), when it is small enough
//! ([`sup_takes_b`]); a larger one goes to the loop nest. Edges are the kernel's (masked
//! loads and stores). Where a tall A is read in place for a narrow C, the first row tile may
//! be shorter than MR, so that the later tiles' loads of A start on cache lines
//! ([`first_tile_rows`]). `gemm_front` chooses between the two and the loop nest by the
//! kernel's `SupLimits`. With threads, the unpacked path
//! runs on a team, each thread on its own block of C ([`gemm_sup_team`]); the packed-A path
//! is one-thread only. A problem of a single tile skips all of this: `gemm_front` hands it
//! to the kernel in one call (`frame/l3/one_tile.rs`).

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cntx::{Blocksizes, PackAOnly, SupKernel};
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{SupUkr, SupUkrArgs, TransposeUkr};
use crate::l3::blocks::{run_on_blocks_of_c, run_on_row_blocks_with_scratch};
use crate::l3::gemm::{cache_blocks, longest_block};
use crate::l3::stack_copies::with_stack_copies;
use crate::packbuf::PackBuf;
use crate::packm::pack_a_panels;
use crate::prefetch::{Level, prefetch_bytes};
use crate::types::{Element, GemmPair, Scalar};
use crate::view::{MatMut, MatRef};

/// The configuration's packing kernels for A and B (`GemmKernel::pack_transposes`), which
/// copy them when the sup kernel cannot read them as they are.
pub(crate) type Transposes<A, B> = (Option<TransposeUkr<A>>, Option<TransposeUkr<B>>);

/// The largest conjugated B the sup path copies (k·n·size, bytes); a larger one sends the
/// problem to the loop nest, which packs B block by block. The copy costs no more than the
/// nest's packing of the same B. Measured (zgemm A·Bᴴ, skx, one thread, session 22), loop
/// nest → sup with B copied: 8³ 428–479 → 248–252 ns, 16³ 1.47–1.49 → 0.97–0.98 µs, 32³
/// 7.1–7.3 → 5.9–6.0 µs, 128³ 331–335 → 317–319 µs, where A·B took 145 ns, 0.77–0.80,
/// 5.3 and 302–309 µs; on two threads 128³ level (187 µs).
const MAX_B_COPY_BYTES: usize = 4 << 20;

/// Whether the sup path can take B: as it is, or conjugated and small enough to copy
/// (the kernel cannot conjugate B's elements itself).
pub(crate) fn sup_takes_b<B: Element>(b: &MatRef<B>) -> bool {
    !b.is_conj()
        || b.nrows()
            .saturating_mul(b.ncols())
            .saturating_mul(size_of::<B>())
            <= MAX_B_COPY_BYTES
}

/// Whether `sup` takes C (m×n, for k steps) with an A of column stride `a_col_stride`
/// (`SupKernel::suits`): from fewer columns of C where A's columns lie far apart and C is
/// row-stored (`SupKernel::suits_row_stored_c`), which a problem solved transposed has.
#[inline(always)]
pub(crate) fn sup_suits_c<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    c: &MatMut<A::Acc>,
    k: usize,
    a_col_stride: Option<usize>,
) -> bool {
    let (m, n) = (c.nrows(), c.ncols());
    if c.col_stride() == 1 && c.row_stride() != 1 {
        sup.suits_row_stored_c(m, n, k, a_col_stride)
    } else {
        sup.suits(m, n, k, a_col_stride)
    }
}

/// C := alpha·A·B + beta·C through `sup` (A m×k, B k×n, C m×n, all checked; a conjugated B
/// no larger than [`sup_takes_b`] allows). `transposes` are the configuration's packing
/// kernels, used if A or B must be copied.
pub(crate) fn gemm_sup<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transposes: Transposes<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    if a.row_stride() != 1 || a.is_conj() || b.is_conj() {
        return gemm_sup_copying(sup, transposes, alpha, a, b, beta, c);
    }
    let blocks = sup_blocks(sup, a.nrows(), b);
    // SAFETY: A is a checked m×k view with unit row stride.
    unsafe { gemm_sup_a_in_place(sup, alpha, a.as_ptr(), a.col_stride(), b, beta, c, blocks) };
    Ok(())
}

/// [`gemm_sup`] for an A the kernel cannot read in place, or a conjugated B: copied first,
/// once. Out of line, so that the usual call (A and B read in place) does not carry this
/// path's buffers and error handling (a few ns of a 2×2×2 call).
#[inline(never)]
fn gemm_sup_copying<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transposes: Transposes<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    with_operands_the_kernel_reads(a, b, transposes, |a, b| {
        let blocks = sup_blocks(sup, a.nrows(), b);
        // SAFETY: A (itself or its copy) is an m×k view with unit row stride.
        unsafe { gemm_sup_a_in_place(sup, alpha, a.as_ptr(), a.col_stride(), b, beta, c, blocks) };
    })
}

/// Calls `f` with A and B as the sup kernel reads them: A with unit row stride and no
/// pending conjugation, B with no pending conjugation. Each one that is not is copied once,
/// column-major with op() applied: onto the stack when the copies are small
/// (`stack_copies.rs`), else into pooled buffers by the packing code. An `Err` (out of
/// memory) comes before `f` is called, so before C is touched.
#[inline(always)]
fn with_operands_the_kernel_reads<A: Element, B: Element, R>(
    a: &MatRef<A>,
    b: &MatRef<B>,
    transposes: Transposes<A, B>,
    f: impl FnOnce(&MatRef<A>, &MatRef<B>) -> R,
) -> Result<R> {
    match with_stack_copies(a, b, f) {
        Ok(done) => Ok(done),
        Err(f) => {
            let mut copies = Copies::default();
            let (a, b) = as_the_kernel_reads(a, b, transposes, &mut copies)?;
            Ok(f(&a, &b))
        }
    }
}

/// Buffers for the copies [`as_the_kernel_reads`] makes.
#[derive(Default)]
struct Copies {
    a: Option<PackBuf>,
    b: Option<PackBuf>,
}

/// A and B as the sup kernel reads them: A with unit row stride and no pending conjugation,
/// B with no pending conjugation. Each one that is not is copied into `copies`, in
/// column-major order with op() applied; an `Err` (out of memory) before C is touched.
fn as_the_kernel_reads<'a, A: Element, B: Element>(
    a: &MatRef<'a, A>,
    b: &MatRef<'a, B>,
    (transpose_a, transpose_b): Transposes<A, B>,
    copies: &'a mut Copies,
) -> Result<(MatRef<'a, A>, MatRef<'a, B>)> {
    let Copies {
        a: a_copy,
        b: b_copy,
    } = copies;
    let a = if a.row_stride() != 1 || a.is_conj() {
        let (m, k) = (a.nrows(), a.ncols());
        view_of_copy(a_copy.insert(copy_col_major(a, transpose_a, "A")?), m, k)
    } else {
        *a
    };
    let b = if b.is_conj() {
        let (k, n) = (b.nrows(), b.ncols());
        view_of_copy(b_copy.insert(copy_col_major(b, transpose_b, "B")?), k, n)
    } else {
        *b
    };
    Ok((a, b))
}

/// A copy of op(X) in column-major order (ld = its rows) that the sup kernel reads in place:
/// one panel as tall as X, which packing makes with its fast paths (8×8 transposes for
/// row-stored X) and op() applied. `name` names X in the error.
pub(crate) fn copy_col_major<T: Element>(
    x: &MatRef<T>,
    transpose: Option<TransposeUkr<T>>,
    name: &str,
) -> Result<PackBuf> {
    let (rows, cols) = (x.nrows(), x.ncols());
    // Checked: X may be a zero-stride view of a larger shape than any memory holds.
    let bytes = rows
        .checked_mul(cols)
        .and_then(|e| e.checked_mul(size_of::<T>()));
    let bytes = bytes.ok_or_else(|| {
        let what = format!("gemm: a copy of the {rows}×{cols} {name} does not fit in memory");
        Error::new(ErrorKind::OutOfMemory, what)
    })?;
    let mut copy = PackBuf::checkout(bytes)?;
    pack_a_panels(
        x,
        rows,
        0..1,
        copy.as_mut_slice::<T>(rows * cols),
        transpose,
    );
    Ok(copy)
}

/// The rows×cols view of a copy made by [`copy_col_major`].
pub(crate) fn view_of_copy<T: Element>(
    copy: &mut PackBuf,
    rows: usize,
    cols: usize,
) -> MatRef<'_, T> {
    let data: &[T] = copy.as_mut_slice::<T>(rows * cols);
    // Cannot fail: the slice holds rows·cols elements and ld = rows is at least 1 when
    // cols > 0.
    MatRef::col_major(data, rows, cols, rows.max(1)).expect("the copy holds the whole view")
}

/// [`gemm_sup`] on a team of `ways.0 × ways.1` threads (see
/// [`block_ways`](crate::thread::plan::block_ways)): each thread runs the one-thread path on
/// its own block of C, an MR-aligned share of the rows by an NR-aligned share of the columns
/// (`blocks.rs`), reading its rows of A and its columns of B in place. The copies of A and B,
/// when the kernel cannot read them as they are, are made once before the team starts.
/// Every tile is computed as one thread would compute it, in the same k blocks (chosen for
/// the whole problem).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn gemm_sup_team<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transposes: Transposes<A, B>,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    ways: (usize, usize),
    pin: bool,
) -> Result<()> {
    let k = a.ncols();
    with_operands_the_kernel_reads(a, b, transposes, |a, b| {
        let blocks = sup_blocks(sup, a.nrows(), b);
        run_on_blocks_of_c(c, ways, sup.tile(), pin, |rows, cols, c_block| {
            let a_rows = a.submatrix(rows.start, 0, rows.len(), k);
            let b_cols = b.submatrix(0, cols.start, k, cols.len());
            // SAFETY: `a_rows` is a checked view with unit row stride (A itself, or its copy).
            unsafe {
                gemm_sup_a_in_place(
                    sup,
                    alpha,
                    a_rows.as_ptr(),
                    a_rows.col_stride(),
                    &b_cols,
                    beta,
                    c_block,
                    blocks,
                )
            };
        })
    })?
}

/// How the sup path walks an m×k A in place: rows in blocks of `rows` (MR-aligned), so that
/// the slice of A every NR-wide panel of C rereads stays in L2; within each, columns of C in
/// blocks of `cols` (NR-aligned, the last one narrower), each through k blocks of `kc` (the
/// last one shorter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SupBlocks {
    kc: usize,
    rows: usize,
    cols: usize,
}

/// The shortest k block the sup path splits k into for A's sake: a slice of a tall A in L2 is
/// then fewer rows deep rather than shorter along k (each tile's call and its pass over C cost
/// about as much as 8–16 k steps). Before session 31 a tall A was split into slices of all
/// its rows, and on skx, once A's far-apart columns were read in place, dgemm 3000×5×50
/// (A 1.2 MiB) in k blocks of 10 ran at 46 GFLOPS, unsplit at 53–55; 2000×24×200 (k blocks
/// of 16 → 100, rows in blocks of 320) 47.4 → 54.6. At 256, NT dgemm 256×256×2048 lost 10 %
/// (k blocks of 256 over 128 rows against 128 over all 256; B's rows 2 KiB apart); at 128
/// it keeps its blocks (docs/Performance.md).
const MIN_A_SPLIT_K: usize = 128;

/// The sup path's blocks for an m-row A and k×n B (as the kernel reads them), decided once
/// for the whole problem so that a team's blocks of C sum over the k blocks one thread uses
/// (a block's rows alone would split A less often): A is split when it is more than twice
/// `SupLimits::k_block_bytes`, into k blocks of at least [`MIN_A_SPLIT_K`] (or all of k) and
/// row blocks whose slice is at most that size, where C has more than one panel (with one,
/// each slice is read once whatever its shape); B's long rows split k too ([`b_k_block`]),
/// and so do the column panels of B that several row tiles reread ([`b_panel_k_block`]).
/// Where k is split and A's rows are one block, C's columns go in blocks of
/// `SupLimits::c_block_bytes_if_k_split` ([`column_block`]); with several row blocks they
/// stay whole, so each slice of A still serves every column. Whatever the blocks, every
/// tile is the same NR-aligned tile of C and sums the same k blocks in the same order, so
/// of these choices only `kc` bears on the bits.
fn sup_blocks<A: Element, B: Element>(sup: &SupKernel<A, B>, m: usize, b: &MatRef<B>) -> SupBlocks {
    let limits = sup.limits();
    let (k, n) = (b.nrows(), b.ncols());
    let (mr, nr) = sup.tile();
    let size = size_of::<A>();
    let (kc, rows) = match a_k_block(m, k, size, limits.k_block_bytes) {
        // Several panels of C reread each slice: rows in blocks whose slice fits.
        Some(kc) if n > nr => (kc, (limits.k_block_bytes / (kc * size) / mr * mr).max(mr)),
        Some(kc) => (kc, m),
        None => (k.max(1), m),
    };
    let kc = even_blocks(
        k,
        kc.min(b_k_block(b, limits.max_b_k_span_bytes))
            .min(b_panel_k_block(sup, m, b)),
    );
    let rows = rows.min(m).max(1);
    let cols = if kc < k && rows == m {
        column_block(
            n,
            nr,
            limits.c_block_bytes_if_k_split / (rows * size_of::<A::Acc>()),
        )
    } else {
        n
    };
    SupBlocks {
        kc,
        rows,
        cols: cols.max(1),
    }
}

/// The width of the column blocks of [`SupBlocks`] for `n` columns and blocks of at most
/// `most` columns (at least `nr`, which validation keeps at 1 or more): the fewest equal
/// blocks, each a whole number of `nr`-wide panels but the last.
fn column_block(n: usize, nr: usize, most: usize) -> usize {
    let blocks = n.div_ceil(most.max(nr));
    if blocks <= 1 {
        return n;
    }
    n.div_ceil(blocks).next_multiple_of(nr)
}

/// [`gemm_sup`] once A is readable in place: by the blocks of [`sup_blocks`], tile by tile.
///
/// # Safety
/// `a` points at an m×k A (m, k: C's rows, B's rows) with unit row stride and column stride
/// `cs_a`; B's and C's views are checked.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_sup_a_in_place<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    a: *const A,
    cs_a: isize,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    blocks: SupBlocks,
) {
    let (m, n, k) = (c.nrows(), c.ncols(), b.nrows());
    let first_tile_rows = first_tile_rows(a, cs_a, (m, n), sup.tile());
    let prefetch_b = prefetches_b_rows(b);
    if blocks.kc >= k && blocks.rows >= m {
        // The usual small problem: one block, B as it is. Also k = 0 (kc is at least 1), so
        // C is still scaled by beta (`gemm_front` settles k = 0 itself today).
        let block = Block {
            a,
            a_row_step: 1,
            cs_a,
            b: *b,
            beta,
            first_tile_rows,
        };
        // SAFETY: A is m×k at unit row stride and column stride cs_a (the caller's promise),
        // B's and C's views are checked (C exclusively borrowed).
        unsafe { sup_tiles(sup, alpha, &block, c, 0..m, 0..n, false, prefetch_b) };
        return;
    }
    // Row blocks come only with more than one panel of C, where the first tile is MR tall.
    for row_start in (0..m).step_by(blocks.rows) {
        let row_end = m.min(row_start + blocks.rows);
        let first = if row_start == 0 {
            first_tile_rows
        } else {
            sup.tile().0
        };
        for col_start in (0..n).step_by(blocks.cols) {
            let col_end = n.min(col_start + blocks.cols);
            for pc in (0..k).step_by(blocks.kc) {
                let kb = blocks.kc.min(k - pc);
                let block = Block {
                    // Row ir of A's slice: rows are adjacent (unit row stride).
                    a: a.wrapping_offset(pc as isize * cs_a),
                    a_row_step: 1,
                    cs_a,
                    b: b.submatrix(pc, 0, kb, n),
                    beta: if pc == 0 { beta } else { A::Acc::one() },
                    first_tile_rows: first,
                };
                // SAFETY: as above, for rows row_start..row_end, columns col_start..col_end
                // and the k slice pc..pc + kb of A and B.
                unsafe {
                    sup_tiles(
                        sup,
                        alpha,
                        &block,
                        c,
                        row_start..row_end,
                        col_start..col_end,
                        false,
                        prefetch_b,
                    )
                };
            }
        }
    }
}

/// C := alpha·A·B + beta·C with A packed, MC×KC block by block, into the loop nest's MR-tall
/// panels, and B read in place: for problems past the sup limits whose B reads well in
/// place (`PackAOnly`), on one thread or a team of `threads` (1: the calling thread alone)
/// of at most [`PACK_A_ONLY_MAX_THREADS`], each on its own MR-aligned block of C's rows
/// with its own A blocks. Saves packing B (and its buffer); the blocks are the loop nest's
/// (`blocks`: KC, MC rounded to the sup kernel's MR, NC; remainders absorbed alike). Every
/// tile is summed over the same k slices wherever its rows fall, so a team computes what
/// one thread computes, bit for bit. Same operands as [`gemm_sup`]; every thread's buffer
/// is checked out before any starts, so running out of memory leaves C untouched.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_sup_packed_a<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transpose_a: Option<TransposeUkr<A>>,
    blocks: Blocksizes,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    threads: usize,
    pin: bool,
) -> Result<()> {
    let (m, k, threads) = (c.nrows(), a.ncols(), threads.max(1));
    let k_slices = cache_blocks(0..k, blocks.kc.max(1));
    let mr = sup.tile().0;
    let share = m.div_ceil(mr).div_ceil(threads) * mr;
    let len = packed_a_len(sup, blocks, share, k);
    let mut buf = PackBuf::checkout(threads * len * size_of::<A>())?;
    let all = buf.as_mut_slice::<A>(threads * len);
    let scratch = (all, len);
    run_on_row_blocks_with_scratch(c, threads, mr, pin, scratch, |rows, c_block, buf| {
        let a_rows = a.submatrix(rows.start, 0, rows.len(), k);
        let slices = k_slices.clone();
        packed_a_by_k_slices(
            sup,
            transpose_a,
            blocks,
            slices,
            alpha,
            &a_rows,
            b,
            beta,
            c_block,
            buf,
        );
    })
}

/// The most threads [`gemm_sup_packed_a`] runs on; with more, the loop nest takes the
/// problem. Each thread reads all of B in place, from the shared L3, once per MC block of
/// its rows, where the loop nest packs each B block once for the team. On 2 threads
/// (session 42, a Zen 4, call by call against the loop nest, which computes the same bits):
/// dgemm NN 512³–1536³ and 3072³ 1.00–1.21×, 2048³ 0.985, TN 768³–2048³ 1.03–1.08, NT
/// 1.00–1.01; sgemm NN 512³–3072³ 0.96–1.14× (most 1.03–1.10), 3072×512×3072 0.95 (twice);
/// the other non-squares 0.99–1.06. More threads were not measured (the VM has two).
pub(crate) const PACK_A_ONLY_MAX_THREADS: usize = 2;

/// Elements of the buffer [`packed_a_by_k_slices`] packs A's blocks into, for a block of C
/// of `m` rows and k = `k`: bounded by the blocksizes (`Cntx::validate`) and by A's extent.
fn packed_a_len<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    blocks: Blocksizes,
    m: usize,
    k: usize,
) -> usize {
    let mr = sup.tile().0;
    let mc = (blocks.mc / mr).max(1) * mr;
    let rows = longest_block(mc).min(m).next_multiple_of(mr);
    rows * longest_block(blocks.kc.max(1)).min(k)
}

/// [`gemm_sup`] on one thread for an op(A) that `sup` packs block by block rather than copy
/// whole (`SupKernel::packs_a_by_blocks`): packed as [`gemm_sup_packed_a`] packs it (MC and NC
/// from `blocks`), but in the k slices of the unpacked path ([`sup_blocks`]), so that every
/// element of C is summed exactly as [`gemm_sup_team`] sums it from its whole copy: the
/// result does not depend on the number of threads (`docs/Multithreading.md`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_sup_a_by_blocks<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transpose_a: Option<TransposeUkr<A>>,
    blocks: Blocksizes,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    let k = a.ncols();
    // As `gemm_sup_a_in_place` walks k: steps of kc, the last one shorter.
    let kc = sup_blocks(sup, a.nrows(), b).kc;
    let k_slices = (0..k).step_by(kc).map(move |pc| pc..k.min(pc + kc));
    let blocks = Blocksizes { kc, ..blocks };
    let len = packed_a_len(sup, blocks, a.nrows(), k);
    let mut buf = PackBuf::checkout(len * size_of::<A>())?;
    let buf = buf.as_mut_slice::<A>(len);
    packed_a_by_k_slices(
        sup,
        transpose_a,
        blocks,
        k_slices,
        alpha,
        a,
        b,
        beta,
        c,
        buf,
    );
    Ok(())
}

/// The body of [`gemm_sup_packed_a`] and [`gemm_sup_a_by_blocks`]: `k_slices` (none longer
/// than `longest_block(blocks.kc)`, starting at 0 and covering k) are the k slices, each
/// packed MC rows at a time into `buf` (at least [`packed_a_len`] elements).
#[allow(clippy::too_many_arguments)]
fn packed_a_by_k_slices<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    transpose_a: Option<TransposeUkr<A>>,
    blocks: Blocksizes,
    k_slices: impl Iterator<Item = Range<usize>> + Clone,
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
    buf: &mut [A],
) {
    // k = 0 never gets here (`gemm_front` scales C itself): with no k slice, C would be left
    // unscaled.
    debug_assert!(!b.is_conj() && a.ncols() > 0);
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let mr = sup.tile().0;
    let mc = (blocks.mc / mr).max(1) * mr;
    let nc = blocks.nc.max(1);
    let depth = longest_block(blocks.kc.max(1)).min(k);
    for jc in (0..n).step_by(nc) {
        let cols = jc..(jc + nc).min(n);
        for Range { start: pc, end } in k_slices.clone() {
            let kb = end - pc;
            debug_assert!(kb <= depth);
            for Range { start: ic, end } in cache_blocks(0..m, mc) {
                let panels = (end - ic).div_ceil(mr);
                let packed = &mut buf[..panels * mr * kb];
                pack_a_panels(
                    &a.submatrix(ic, pc, end - ic, kb),
                    mr,
                    0..panels,
                    packed,
                    transpose_a,
                );
                let block = Block {
                    // Panel p (rows p·MR..) starts p·MR·kb elements in: row ir at ir·kb.
                    a: packed.as_ptr().wrapping_sub(ic * kb),
                    a_row_step: kb as isize,
                    cs_a: mr as isize,
                    b: b.submatrix(pc, 0, kb, n),
                    beta: if pc == 0 { beta } else { A::Acc::one() },
                    first_tile_rows: mr,
                };
                // SAFETY: rows ic..end of the block are the packed panels just written
                // (unit row stride, column stride MR, MR-aligned tiles from ic), B's and C's
                // views are checked (C exclusively borrowed).
                unsafe { sup_tiles(sup, alpha, &block, c, ic..end, cols.clone(), true, false) };
            }
        }
    }
}

/// One k slice of A and B for [`sup_tiles`]: row i of the slice of A starts at
/// `a + i·a_row_step`, its columns `cs_a` apart (rows adjacent in each column).
struct Block<'a, A: GemmPair<B>, B: Element> {
    a: *const A,
    a_row_step: isize,
    cs_a: isize,
    b: MatRef<'a, B>,
    beta: A::Acc,
    /// Rows of the first tile (MR, or fewer to put the later tiles' A on cache lines:
    /// [`first_tile_rows`]); the rest are MR tall.
    first_tile_rows: usize,
}

/// The shortest A, in tiles of MR rows, that starts its tiles on cache lines
/// ([`first_tile_rows`]). Below it the extra tile cost more than it saved (sgemm 64×8×64,
/// 96×6×96 and 128×4×128: −5–9 %).
const LINE_ALIGNED_MIN_TILES: usize = 8;

/// Rows of the first tile of an A read in place (unit row stride, column stride `cs_a`) for
/// an m×n C: fewer than MR where that puts every later tile's columns on a 64-byte line, so
/// that no vector load of A straddles two lines. Only where every column starts at the same
/// offset in a line (`cs_a` a whole number of lines), A is tall enough
/// ([`LINE_ALIGNED_MIN_TILES`]), and C narrower than a tile (n < NR: few FMAs per load of
/// A); otherwise MR. Measured (skx, NN, A 16 bytes past a line, against MR-tall tiles
/// throughout): dgemm 256×4×256 +10 %, 256×8×256 +21–24 %, sgemm +10–13 % (once level);
/// at n = NR level; on squares of 64–128, where n > NR, −1–2 % dgemm and −5–7 % sgemm 128³,
/// so they keep MR.
fn first_tile_rows<A: Element>(
    a: *const A,
    cs_a: isize,
    (m, n): (usize, usize),
    (mr, nr): (usize, usize),
) -> usize {
    const LINE: usize = 64;
    let size = size_of::<A>();
    let past_line = a as usize % LINE;
    let columns_alike = (cs_a.unsigned_abs() * size).is_multiple_of(LINE);
    let shifts = past_line != 0 && past_line.is_multiple_of(size) && columns_alike;
    if shifts && m >= LINE_ALIGNED_MIN_TILES * mr && n < nr {
        (LINE - past_line) / size
    } else {
        mr
    }
}

/// C[rows, cols] := alpha·A[rows, ..]·B[.., cols] + beta·C[rows, cols] for one k slice, tile
/// by tile: NR-wide column panels, row panels inside each (from `rows.start`: the block's
/// `first_tile_rows`, then MR tall). With
/// `prefetch_c`, each tile of column-stored C is prefetched before its kernel call (C of a
/// large problem is far from L1: 2–3.5 % on dgemm 640–2000³ with A packed; a small problem's
/// C is near, and the hints only cost).
///
/// # Safety
/// For every row i in `rows` the slice of A holds `b.nrows()` readable elements from
/// `a + i·a_row_step`, `cs_a` apart, with rows i..i+MR adjacent wherever a tile starting at
/// i reads them (from `rows.start`: the block's `first_tile_rows`, at most MR, then steps of
/// MR; a block whose A is not at unit row step has `first_tile_rows` = MR); `rows` and
/// `cols` are in C.
#[allow(clippy::too_many_arguments)]
unsafe fn sup_tiles<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    block: &Block<A, B>,
    c: &mut MatMut<A::Acc>,
    rows: Range<usize>,
    cols: Range<usize>,
    prefetch_c: bool,
    prefetch_b: bool,
) {
    let nr = sup.tile().1;
    let b = &block.b;
    if copies_b_panels(sup, b, rows.len()) {
        // SAFETY: the caller's promise, passed on.
        unsafe { sup_tiles_copying_b(sup, alpha, block, c, rows, cols, prefetch_c) };
        return;
    }
    let mut args = block_args(alpha, block, c);
    // Plain loops: `step_by` divided to count its steps, twice per column panel (a few ns
    // per call, measured on 2×2×2).
    let mut jr = cols.start;
    while jr < cols.end {
        args.n = nr.min(cols.end - jr);
        args.b = b.as_ptr().wrapping_offset(jr as isize * b.col_stride());
        if prefetch_b {
            prefetch_b_panel(b, jr + PREFETCH_B_PANELS_AHEAD * nr, nr, cols.end);
        }
        // SAFETY: the caller's promise; `args` holds this panel's B, columns jr.. of B's
        // checked view.
        unsafe { column_panel_tiles(sup, &mut args, block, c, rows.clone(), jr, prefetch_c) };
        jr += nr;
    }
}

/// The kernel arguments a block's tiles share (B as the block holds it); the tile loops set
/// each tile's m, n, A, C (and B where they copy it).
fn block_args<A: GemmPair<B>, B: Element>(
    alpha: A::Acc,
    block: &Block<A, B>,
    c: &mut MatMut<A::Acc>,
) -> SupUkrArgs<A, B> {
    let b = &block.b;
    SupUkrArgs {
        m: 0,
        n: 0,
        k: b.nrows(),
        alpha,
        a: block.a,
        cs_a: block.cs_a,
        b: b.as_ptr(),
        rs_b: b.row_stride(),
        cs_b: b.col_stride(),
        beta: block.beta,
        c: c.ptr_at(0, 0),
        rs_c: c.row_stride(),
        cs_c: c.col_stride(),
    }
}

/// The row tiles of one column panel (columns `jr..jr + args.n` of C, its B in `args`):
/// the sup path's ir loop.
///
/// # Safety
/// As [`sup_tiles`], with `args.b`, `args.rs_b`, `args.cs_b` a B of `args.k` rows and
/// `args.n` columns readable for the kernel.
#[inline(always)]
unsafe fn column_panel_tiles<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    args: &mut SupUkrArgs<A, B>,
    block: &Block<A, B>,
    c: &mut MatMut<A::Acc>,
    rows: Range<usize>,
    jr: usize,
    prefetch_c: bool,
) {
    let mut ir = rows.start;
    let mut tile_rows = block.first_tile_rows;
    while ir < rows.end {
        args.m = tile_rows.min(rows.end - ir);
        args.a = block.a.wrapping_offset(ir as isize * block.a_row_step);
        args.c = c.ptr_at(ir, jr);
        if prefetch_c && args.rs_c == 1 {
            for j in 0..args.n {
                let column = args.c.wrapping_offset(j as isize * args.cs_c);
                prefetch_bytes(column, args.m * size_of::<A::Acc>(), Level::L1);
            }
        }
        // SAFETY: the tile's rows ir.. and columns jr.. are in C's view (exclusively
        // borrowed) and within the kernel's MR×NR; its A and B are in range by the
        // caller's promise; the context's kernel runs on this CPU.
        unsafe { run_sup_tile(sup, args) };
        ir += args.m;
        tile_rows = sup.tile().0;
    }
}

/// The bytes of the stack buffer [`sup_tiles_copying_b`] copies a column panel of B into:
/// a k block of up to 1365 f32 or 682 f64 rows of a 6-wide panel, the L1 of the CPUs the
/// configurations serve. The sup path's k blocks (A's slice in L2) are shorter wherever A
/// is large; the rule was measured with panels of up to 24 KiB (sgemm 64×256×1024).
const B_PANEL_BYTES: usize = 32 << 10;

/// The fewest row tiles of C for which [`copies_b_panels`] holds: each copy is read by that
/// many tiles. Session 47 (the Zen 3, one thread, NT): with two tiles the copy lost (dgemm
/// 16×64×256 29.8 → 26.2 GFLOPS), from four it gained (docs/Performance.md, "B's panels
/// copied").
const COPIED_B_MIN_ROW_TILES: usize = 4;

/// A 64-byte aligned buffer of [`B_PANEL_BYTES`].
#[repr(C, align(64))]
struct BPanelBuf([MaybeUninit<u8>; B_PANEL_BYTES]);

/// Whether [`sup_tiles`] copies each column panel of `b` (one k block) before its row tiles
/// (`rows` of C): [`b_panels_handled`], C of at least [`COPIED_B_MIN_ROW_TILES`] row tiles,
/// and a panel that fits the buffer.
fn copies_b_panels<A: Element, B: Element>(
    sup: &SupKernel<A, B>,
    b: &MatRef<B>,
    rows: usize,
) -> bool {
    let (mr, nr) = sup.tile();
    // The division last.
    b_panels_handled(sup, b)
        && b.nrows().saturating_mul(nr).saturating_mul(size_of::<B>()) <= B_PANEL_BYTES
        && rows.div_ceil(mr) >= COPIED_B_MIN_ROW_TILES
}

/// Whether the configuration's rules for B's column panels apply to `b` (one k block): k
/// from `SupLimits::pack_b_panels_min_k`, op(B) not conjugated, its rows contiguous and at
/// most a page apart (rows further apart are prefetched instead: [`prefetches_b_rows`]).
fn b_panels_handled<A: Element, B: Element>(sup: &SupKernel<A, B>, b: &MatRef<B>) -> bool {
    // The compares a small problem fails first.
    b.col_stride() == 1
        && b.nrows() >= sup.limits().pack_b_panels_min_k
        && b.row_stride() != 1
        && !b.is_conj()
        && b.row_stride().unsigned_abs().saturating_mul(size_of::<B>()) <= PAGE_BYTES
}

/// The longest k block [`sup_blocks`] lets B's column panels have, for C of `m` rows, where
/// [`b_panels_handled`] and several row tiles read each panel: a panel worth copying (four
/// row tiles or more) must fit the copy's buffer, and one read in place, with B's rows at
/// least a line apart, touches a line per row of k, of which a buffer's worth
/// ([`B_PANEL_BYTES`]) stays in L1 for the next row tile. Otherwise all of k.
fn b_panel_k_block<A: Element, B: Element>(
    sup: &SupKernel<A, B>,
    m: usize,
    b: &MatRef<B>,
) -> usize {
    let (mr, nr) = sup.tile();
    let k = b.nrows();
    let line = L1_LINE.unsigned_abs();
    if m <= mr || !b_panels_handled(sup, b) {
        k
    } else if m.div_ceil(mr) >= COPIED_B_MIN_ROW_TILES {
        (B_PANEL_BYTES / (nr * size_of::<B>())).max(1)
    } else if b.row_stride().unsigned_abs() * size_of::<B>() >= line {
        B_PANEL_BYTES / line
    } else {
        k
    }
}

/// [`sup_tiles`] with each column panel of B (rows contiguous, [`copies_b_panels`]) first
/// copied into a stack buffer, its rows adjacent (row stride = the panel's width), which
/// the panel's row tiles then read from L1. Out of line: the buffer's frame is paid only
/// here.
///
/// # Safety
/// As [`sup_tiles`], with `copies_b_panels` true for the block's B.
#[inline(never)]
unsafe fn sup_tiles_copying_b<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    alpha: A::Acc,
    block: &Block<A, B>,
    c: &mut MatMut<A::Acc>,
    rows: Range<usize>,
    cols: Range<usize>,
    prefetch_c: bool,
) {
    let nr = sup.tile().1;
    let b = &block.b;
    let k = b.nrows();
    let mut buf = BPanelBuf([MaybeUninit::uninit(); B_PANEL_BYTES]);
    assert!(k * nr * size_of::<B>() <= B_PANEL_BYTES && align_of::<B>() <= 64);
    // SAFETY: the buffer holds B_PANEL_BYTES bytes, aligned for B (asserted), enough for
    // k·nr elements; `MaybeUninit` elements need no initialization.
    let panel: &mut [MaybeUninit<B>] =
        unsafe { std::slice::from_raw_parts_mut(buf.0.as_mut_ptr().cast(), k * nr) };
    let mut args = block_args(alpha, block, c);
    for jr in cols.clone().step_by(nr) {
        let n = nr.min(cols.end - jr);
        let copy = copy_b_panel(&b.submatrix(0, jr, k, n), &mut panel[..k * n]);
        args.n = n;
        args.b = copy.as_ptr();
        args.rs_b = n as isize;
        args.cs_b = 1;
        // SAFETY: the copy holds the panel's k×n elements at row stride n and column stride
        // 1; the rest is the caller's promise.
        unsafe { column_panel_tiles(sup, &mut args, block, c, rows.clone(), jr, prefetch_c) };
    }
}

/// Copies `b` (k×n, contiguous rows) into `dst` (k·n elements) row after row, adjacent:
/// `dst[p·n + j] = b[p, j]`. Returns `dst`, now initialized. The kernels' widths get
/// fixed-size copies, a few moves per row.
fn copy_b_panel<'d, B: Element>(b: &MatRef<B>, dst: &'d mut [MaybeUninit<B>]) -> &'d [B] {
    match b.ncols() {
        3 => copy_b_rows::<B, 3>(b, dst),
        4 => copy_b_rows::<B, 4>(b, dst),
        6 => copy_b_rows::<B, 6>(b, dst),
        8 => copy_b_rows::<B, 8>(b, dst),
        12 => copy_b_rows::<B, 12>(b, dst),
        n => {
            for (p, row) in dst.chunks_exact_mut(n.max(1)).enumerate() {
                for (j, d) in row.iter_mut().enumerate() {
                    // SAFETY: p < k and j < n: inside the view.
                    d.write(unsafe { b.read_stored(p, j) });
                }
            }
        }
    }
    // SAFETY: every one of dst's k·n elements was written above.
    unsafe { &*(dst as *const [MaybeUninit<B>] as *const [B]) }
}

/// [`copy_b_panel`] for N columns.
#[inline(always)]
fn copy_b_rows<B: Element, const N: usize>(b: &MatRef<B>, dst: &mut [MaybeUninit<B>]) {
    assert!(b.ncols() == N && b.col_stride() == 1 && dst.len() == b.nrows() * N);
    for (p, row) in dst.chunks_exact_mut(N).enumerate() {
        // SAFETY: row p < k of the checked view holds N contiguous elements (unit column
        // stride), and `row` has room for N; a fixed-size copy is a few vector moves (an
        // element at a time, it took 42 % of sgemm NT 32×64×4096 in perf).
        unsafe {
            let src = b.as_ptr().offset(p as isize * b.row_stride());
            std::ptr::copy_nonoverlapping(src, row.as_mut_ptr().cast::<B>(), N);
        }
    }
}

/// A page: B's rows further apart than this each lie in pages of their own.
const PAGE_BYTES: usize = 4096;

/// How many column panels ahead of the tiles [`prefetch_b_panel`] fetches B's rows: 1, 2
/// and 4 read alike (session 33).
const PREFETCH_B_PANELS_AHEAD: usize = 2;

/// The shortest span of B along k (k·|rs_b|·size, bytes) for which [`prefetches_b_rows`]
/// holds: past the L2, where B comes from L3 or memory. Below it, with B in cache, the
/// prefetches cost 1–5 % (sgemm NT 100×500×300, 256³).
const PREFETCH_B_MIN_SPAN_BYTES: usize = 1 << 20;

/// Whether the sup path prefetches B's rows a few column panels ahead of its tiles
/// ([`prefetch_b_panel`]): B with contiguous rows (op(B) = Bᵀ of a column-major B, or a
/// row-major B) more than a page apart and spread over the L1's sets, spanning more than the
/// L2 along k.
///
/// The tiles walk such a B panel by panel, NR elements of each of a k block's rows at a
/// time: one stream per row, each on pages of its own, and the hardware prefetcher does not
/// follow them. Measured on skx (session 33, one thread, NT, alternated, against no
/// prefetch): dgemm 64×2000×2000 +24–30 %, 16×2000×2000 +78 %, 48×1000×1000 +34–39 %,
/// 128×2000×1000 +13 %, 128…256×1000×1000 +5–7 %; sgemm 64×2000×2000 +29–30 %,
/// 16×4000×4000 +57 %, 96×2000×1000 +19 %, 192×2000×1000 +7 %. Rows a page apart or less
/// (sgemm n = 500 and 1000, dgemm 250 and 500) share pages and the hardware follows them:
/// there the prefetches lost 2–10 %. Rows a multiple of 4 KiB apart (2048 doubles or floats)
/// share an L1 set: there they lost 1–5 %. With `_MM_HINT_T0` (into the L1) 2000-double
/// rows gained 3 % instead of 28 %. Copying each KC×NR panel of such a B before its tiles,
/// tried first, lost 1–47 % on these shapes.
fn prefetches_b_rows<B: Element>(b: &MatRef<B>) -> bool {
    let row_bytes = b.row_stride().unsigned_abs() * size_of::<B>();
    b.col_stride() == 1
        && row_bytes > PAGE_BYTES
        && row_bytes.saturating_mul(b.nrows()) > PREFETCH_B_MIN_SPAN_BYTES
        && columns_spread_over_l1(row_bytes)
}

/// Prefetches into the L2 the elements `start..start + nr` (clipped to `end`) of each of
/// B's rows: the column panel the tiles reach [`PREFETCH_B_PANELS_AHEAD`] panels later.
fn prefetch_b_panel<B: Element>(b: &MatRef<B>, start: usize, nr: usize, end: usize) {
    if start >= end {
        return;
    }
    let bytes = nr.min(end - start) * size_of::<B>();
    let first = b.as_ptr().wrapping_offset(start as isize * b.col_stride());
    for p in 0..b.nrows() {
        let row = first.wrapping_offset(p as isize * b.row_stride());
        prefetch_bytes(row, bytes, Level::L2);
    }
}

/// One sup kernel call for one tile, or its transpose ([`edge_transposed`]) for a tile of at
/// most [`TRANSPOSED_EDGE_ROWS`] rows whose B has unit column stride, or, for such a B, the
/// tile's whole vectors in one call and the rows past them transposed
/// ([`split_remainder_transposed`]): the sup path's tile loop and the one-tile shortcuts
/// (`frame/l3/one_tile.rs`, `frame/blas/one_tile.rs`) all call tiles through this.
///
/// # Safety
/// The `SupUkr` contract for `args` with `sup`'s kernel, which runs on this CPU.
#[inline(always)]
pub(crate) unsafe fn run_sup_tile<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    args: &SupUkrArgs<A, B>,
) {
    let (ukr, mr) = (sup.ukr(), sup.tile().0);
    // SAFETY: the caller's.
    unsafe {
        if args.cs_b == 1 && args.k >= TRANSPOSED_MIN_K {
            if args.m <= TRANSPOSED_EDGE_ROWS {
                if args.n > args.m && edge_transposed(ukr, mr, args) {
                    return;
                }
            } else {
                let rest = sup.transposed_remainder().rows_of(mr, args.m, args.n);
                if rest > 0 && split_remainder_transposed(sup, args, rest) {
                    return;
                }
            }
        }
        ukr(args);
    }
}

/// Computes a tile whose B has unit column stride as two: its whole vector (MR/2 rows) as
/// it is, and the `rest` rows past it (which the kernel's
/// [`crate::cntx::TransposedRemainder`] takes) as their transpose ([`edge_transposed`]);
/// returns true. Returns false, having done nothing, where the pair cannot trade places.
///
/// As one tile, the rows past the whole vectors cost a half-width vector (one lane to half of
/// it used) per column and k step; transposed, one FMA per row and k step covers up to a
/// vector of columns. Measured on skx (one thread, NT, two alternated runs, split against
/// one call): sgemm 17×12×694 1.28×, 20×12×694 1.24×, 17–19×n×200 1.10–1.45× for n ≥ r + 2
/// (r the rows past the vector; 17×2 0.93, 20×5 0.95), 21–22×n×200 (r = 5, 6) 0.995–1.17×,
/// k = 32 and 48 1.10–1.29×; dgemm 9–11×n×200 (r = 1–3) 1.01–1.37× for n from r + 2 to 10,
/// where 11 and 12 columns lost (9×12 0.92). With haswell's kernels forced on the same
/// machine it lost (sgemm 11×12×200 0.76, dgemm 6×4×200 0.79), so haswell keeps one call.
///
/// # Safety
/// As [`run_sup_tile`], with `args.cs_b == 1` and `0 < rest < args.m`.
#[inline(never)]
unsafe fn split_remainder_transposed<A: GemmPair<B>, B: Element>(
    sup: &SupKernel<A, B>,
    args: &SupUkrArgs<A, B>,
    rest: usize,
) -> bool {
    let mr = sup.tile().0;
    let whole = args.m - rest;
    // Rows whole.. of the tile: A's (unit row stride) and C's, inside the tile.
    let remainder = SupUkrArgs {
        m: rest,
        a: args.a.wrapping_add(whole),
        c: args.c.wrapping_offset(whole as isize * args.rs_c),
        ..*args
    };
    // SAFETY: the caller's contract, for the tile's last `rest` rows (B's rows contiguous,
    // as `edge_transposed` needs) and then for its first `whole` rows; each call writes only
    // its own rows of C.
    unsafe {
        if !edge_transposed(sup.ukr(), mr, &remainder) {
            return false;
        }
        (sup.ukr())(&SupUkrArgs { m: whole, ..*args });
    }
    true
}

/// The most rows of a tile that [`edge_transposed`] computes as Cᵀ = Bᵀ·Aᵀ when B's rows are
/// contiguous. Measured on skx, one edge tile of 12 columns, ns as it is → transposed:
/// * sgemm, k = 96: 1 row 191 → 105, 2 rows 191 → 113, 3 rows 192 → 135, 4 rows 193 → 153,
///   6 rows 192 → 210; k = 32: 1 row 64 → 37, 2 rows 64 → 44, 4 rows 64 → 66;
/// * dgemm, k = 96: 1 row 216 → 114, 2 rows 215 → 124, 3 rows 216 → 167, 4 rows 218 → 220.
///
/// (The transposed tile has one accumulator per row of C, so its k loop is bound by the FMA
/// latency, not by its one FMA per row and k step: 2 rows cost little more than 1.)
const TRANSPOSED_EDGE_ROWS: usize = 2;

/// The shortest k for which a tile is computed transposed ([`run_sup_tile`]; and a whole
/// short, wide problem, `gemm_front`): with shorter k the transposed call's set-up (two
/// checked views; a general-stride C) costs more than its k loop saves. Through cblas NT, ns,
/// as it is → transposed: sgemm 2×12×8 45 → 54, 2×12×16 68 → 74, 2×12×32 121 → 85–97;
/// dgemm 2×12×8 42 → 52–54, 2×12×16 57 → 60, 2×12×32 103 → 83–92; 2×2×2 sgemm 25 → 38,
/// dgemm 46 → 70. A tile no wider than it is tall stays as it is too: its transpose is no
/// better shaped.
pub(crate) const TRANSPOSED_MIN_K: usize = 32;

/// Computes a tile of at most [`TRANSPOSED_EDGE_ROWS`] rows whose B has unit column stride
/// (op(B) = Bᵀ of a column-major B) as its transpose, Cᵀ = Bᵀ·Aᵀ, and returns true; returns
/// false, having done nothing, for a mixed-type pair (A and B cannot trade places) or a tile
/// wider than the kernel is tall.
///
/// As it is, such a tile spends a whole vector (mostly masked off) on its few rows for each
/// of its columns, every k step. Transposed, B's rows are the vectors (contiguous, NR of them
/// in one or two registers) and A's few rows the broadcasts: one FMA per row of C per k step
/// instead of one per column. Cᵀ's columns are C's rows, strided, so the kernel writes them
/// through its general-stride epilogue, which is cheap for so few elements.
///
/// # Safety
/// `args` is a call of `ukr` that satisfies the sup kernel contract, with B's rows adjacent
/// (`cs_b == 1`) and A's tile rows adjacent (unit row stride, as every sup tile has).
#[inline(never)]
unsafe fn edge_transposed<A: GemmPair<B>, B: Element>(
    ukr: SupUkr<A, B>,
    mr: usize,
    args: &SupUkrArgs<A, B>,
) -> bool {
    if args.n > mr {
        return false;
    }
    // SAFETY: the caller's: the tile's A (m×k, rows adjacent, columns cs_a apart) and B
    // (k×n, rows rs_b apart, columns adjacent) are readable.
    let views = unsafe {
        (
            MatRef::from_raw_parts(args.a, args.m, args.k, 1, args.cs_a),
            MatRef::from_raw_parts(args.b, args.k, args.n, args.rs_b, 1),
        )
    };
    let (Ok(a), Ok(b)) = views else {
        return false;
    };
    let Some((bt, at)) = A::swapped(&a, &b) else {
        return false;
    };
    let transposed = SupUkrArgs {
        m: args.n,
        n: args.m,
        k: args.k,
        alpha: args.alpha,
        a: bt.as_ptr(),
        cs_a: bt.col_stride(),
        b: at.as_ptr(),
        rs_b: at.row_stride(),
        cs_b: at.col_stride(),
        beta: args.beta,
        c: args.c,
        rs_c: args.cs_c,
        cs_c: args.rs_c,
    };
    // SAFETY: the same tile of C, transposed: n ≤ MR rows, m ≤ NR columns (m is at most
    // TRANSPOSED_EDGE_ROWS, below every kernel's NR); A' = Bᵀ has unit row stride (B's
    // unit column stride), B' = Aᵀ any strides; the elements read and written are the
    // caller's tile's.
    unsafe { ukr(&transposed) };
    true
}

/// Whether the sup path would split k of an m×n×k problem into blocks while C is larger than
/// `SupLimits::max_c_bytes_if_k_split`: the driver then packs A instead, where B reads well
/// in place (measured on skx, docs/Performance.md, "Sup or packed A").
pub(crate) fn splits_k_over_large_c<A: Element, B: Element>(
    sup: &SupKernel<A, B>,
    m: usize,
    n: usize,
    k: usize,
) -> bool {
    let limits = sup.limits();
    let c_bytes = m.saturating_mul(n).saturating_mul(size_of::<A::Acc>());
    c_bytes > limits.max_c_bytes_if_k_split
        && a_k_block(m, k, size_of::<A>(), limits.k_block_bytes).is_some_and(|kc| kc < k)
}

/// The most that [`packs_only_a`]'s shortest k (KC/2) can be. With dgemm's KC doubled to 768
/// in session 32, KC/2 would have sent dgemm k = 256…383 to the loop nest (2000×2000×256
/// −1.4 %, 1000×1000×300 −3 %). A flat 256 for every dtype lost elsewhere: sgemm k = 192…255
/// packing only A 2–4 % (4096×4096×200 and ×240, at 192), zgemm and cgemm k = 128…255 in
/// the loop nest 1–6 % (2000×2000×200). So KC/2 (sgemm 256, cgemm and zgemm 128), capped
/// here for dgemm (docs/Performance.md, "dgemm's KC").
const PACK_A_ONLY_MIN_K_CAP: usize = 256;

/// Whether a one-thread problem past the sup limits, with k×n B, goes to
/// [`gemm_sup_packed_a`] under `rule`, for a sup kernel reading B `b_group` columns at a
/// time and the loop nest's KC.
/// Besides B's strides (`PackAOnly`), k must be at least KC/2, at most
/// [`PACK_A_ONLY_MIN_K_CAP`]: with short k the sup kernel's per-tile overhead shows (dgemm
/// 4096×4096×16 and ×64 2–5 % behind the loop nest, ×256 level; 2000×2000×k level from k =
/// 16 on), and a KC-deep block of B must span at most 1 MiB along k: B read in place with
/// long rows (row-stored) touches a new line, often a new page, every k step of every tile.
/// Against the loop nest, which packs it, on the first skx machine (dgemm KC 384): dgemm NT
/// 384³ +2.4 %, 512³ level, 640³ −1.1 %, 1000³ −5.5 %; sgemm NT 512³ +2.6 %, 768³ level,
/// 896³ −2 % (KC blocks of 1.1, 1.5, 1.9, 2.9, 1, 1.5 and 1.75 MiB), so the limit was 1.5
/// MiB until session 42. On a Zen 4 (session 42, one thread, call by call, 1 MiB against
/// 1.5): sgemm NT 544³–768³ +3–10 %, 2000×640×640 +13 %, 640×640×2000 +5 %, TT 640³ and 768³
/// +4 and +8 %, 1000×700×500 +11 %; dgemm NT 2000×400×400 +5 %, TT 384³ +9 %, the rest level;
/// cgemm NT 576³–768³ +1–4 %, zgemm NT 288³–384³ 0.98–0.99 (256³, unchanged, read 0.98 too);
/// sgemm NT 512³ (exactly 1 MiB) stays in place: with 512 KiB it lost 3–10 %.
pub(crate) fn packs_only_a<T: Element>(
    rule: PackAOnly,
    b: &MatRef<T>,
    b_group: usize,
    kc: usize,
) -> bool {
    const MOST_KC_SPAN_BYTES: usize = 1 << 20;
    let kc_span = kc.min(b.nrows()).saturating_mul(k_step_bytes(b));
    match rule {
        PackAOnly::Never => false,
        PackAOnly::WhenBSpreadsOverL1 => {
            b.nrows() >= (kc / 2).min(PACK_A_ONLY_MIN_K_CAP)
                && kc_span <= MOST_KC_SPAN_BYTES
                && b_spreads_over_l1(b, b_group)
        }
        PackAOnly::Always => true,
    }
}

/// Whether B reads well in place `group` columns at a time: the cache lines the first eight
/// k steps of its first group touch put at most six in any set of the L1.
fn b_spreads_over_l1<T: Element>(b: &MatRef<T>, group: usize) -> bool {
    const MOST_PER_SET: usize = 6;
    const STEPS: usize = 8;
    let size = size_of::<T>() as isize;
    let (k, n) = (b.nrows().min(STEPS), b.ncols().min(group).min(16));
    // Line numbers (by address; nothing is read), each element's first and last byte.
    let mut lines = [0isize; 2 * STEPS * 16];
    let mut count = 0;
    let base = b.as_ptr() as isize;
    for p in 0..k {
        for j in 0..n {
            let at = (p as isize * b.row_stride() + j as isize * b.col_stride()).wrapping_mul(size);
            let first = base.wrapping_add(at);
            lines[count] = first.div_euclid(L1_LINE);
            lines[count + 1] = first.wrapping_add(size - 1).div_euclid(L1_LINE);
            count += 2;
        }
    }
    most_lines_in_one_l1_set(&mut lines[..count]) <= MOST_PER_SET
}

/// Whether A's columns, `stride_bytes` apart, spread over the L1's sets well enough for the
/// sup kernel to read A in place though they lie more than a page apart
/// (`SupLimits::far_a_min_n`): the two lines of a tile's column (128 bytes, from a line
/// start) in 16 consecutive columns put at most four in any set. Columns a multiple of 4 KiB
/// apart all share a set, 6 KiB two sets, and there the kernel lost to packing A or to the
/// gemv columns kernel (dgemm 512×8×200 0.82, 2048×16×64 0.77). By the stride alone, not
/// A's address, so that the path (and the result's bits) does not depend on where A lies.
pub(crate) fn columns_spread_over_l1(stride_bytes: usize) -> bool {
    most_column_lines_in_one_l1_set(stride_bytes) <= 4
}

/// Whether 16 of A's columns, `stride_bytes` apart, put no more lines in any set of the L1
/// than it has ways (8), as [`columns_spread_over_l1`] counts them: the looser test of
/// `SupLimits::far_a_max_short_k`.
pub(crate) fn columns_fit_l1_ways(stride_bytes: usize) -> bool {
    most_column_lines_in_one_l1_set(stride_bytes) <= 8
}

/// The most lines that the two lines of a tile's column (128 bytes, from a line start) in 16
/// consecutive columns `stride_bytes` apart put in one set of the L1.
fn most_column_lines_in_one_l1_set(stride_bytes: usize) -> usize {
    // The count depends on the stride alone, and one call asks up to six times (each rule
    // that may read far-apart columns in place, for the shortcut and again in `gemm_front`):
    // the last stride's count is kept, as (stride + 1)·64 + count (at most 32; 0: none
    // yet). At six counts of 40 ns each, the check was a fifth of a dgemm TT 4×300×6 call
    // (`perf`, session 55). Relaxed: a stale or lost entry only means counting again.
    const COUNT_BITS: u32 = 6;
    static LAST: AtomicUsize = AtomicUsize::new(0);
    let key = stride_bytes
        .checked_add(1)
        .and_then(|s| s.checked_mul(1 << COUNT_BITS));
    let last = LAST.load(Ordering::Relaxed);
    if let Some(key) = key
        && last >> COUNT_BITS << COUNT_BITS == key
    {
        return last & ((1 << COUNT_BITS) - 1);
    }
    let most = column_lines_counted(stride_bytes);
    if let Some(key) = key {
        LAST.store(key | most, Ordering::Relaxed);
    }
    most
}

/// [`most_column_lines_in_one_l1_set`], counted.
fn column_lines_counted(stride_bytes: usize) -> usize {
    const COLUMNS: usize = 16;
    const TILE_COLUMN_BYTES: isize = 128;
    let mut lines = [0isize; 2 * COLUMNS];
    for (p, pair) in lines.chunks_exact_mut(2).enumerate() {
        let first = (p as isize).wrapping_mul(stride_bytes as isize);
        pair[0] = first.div_euclid(L1_LINE);
        pair[1] = first
            .wrapping_add(TILE_COLUMN_BYTES - 1)
            .div_euclid(L1_LINE);
    }
    most_lines_in_one_l1_set(&mut lines)
}

/// The line size and set count of the L1 the spread checks model (64-byte lines, 64 sets,
/// 8 ways: a 32 KiB L1, as on every x86 CPU the configurations serve).
const L1_LINE: isize = 64;
const L1_SETS: isize = 64;

/// The most distinct lines (by number) that fall into one set of the L1.
fn most_lines_in_one_l1_set(lines: &mut [isize]) -> usize {
    lines.sort_unstable();
    let mut per_set = [0usize; L1_SETS as usize];
    let mut previous = None;
    for &line in lines.iter() {
        if previous != Some(line) {
            per_set[line.rem_euclid(L1_SETS) as usize] += 1;
        }
        previous = Some(line);
    }
    per_set.into_iter().max().unwrap_or(0)
}

/// The longest k block of B whose rows span at most `span_bytes` (`SupLimits::
/// max_b_k_span_bytes`), split evenly; all of k if B spans no more (or `span_bytes` is 0).
fn b_k_block<T: Element>(b: &MatRef<T>, span_bytes: usize) -> usize {
    let (k, step) = (b.nrows(), k_step_bytes(b));
    if span_bytes == 0 || step.saturating_mul(k) <= span_bytes {
        return k.max(1);
    }
    even_blocks(k, (span_bytes / step).max(1))
}

/// How far apart B's rows are, in bytes: the distance a tile's walk through B moves per k
/// step (at least one element, for a zero row stride).
fn k_step_bytes<T: Element>(b: &MatRef<T>) -> usize {
    b.row_stride()
        .unsigned_abs()
        .max(1)
        .saturating_mul(size_of::<T>())
}

/// The k block that splits an m×k A of `size`-byte elements when it is more than twice
/// `block_bytes` (`None`: A stays whole): k split evenly into blocks whose slice of A is at
/// most about `block_bytes`, but no shorter than [`MIN_A_SPLIT_K`] (or all of k).
#[inline]
fn a_k_block(m: usize, k: usize, size: usize, block_bytes: usize) -> Option<usize> {
    let column = m.max(1).saturating_mul(size);
    if block_bytes == 0 || column.saturating_mul(k) <= block_bytes.saturating_mul(2) {
        return None;
    }
    Some(even_blocks(k, (block_bytes / column).max(MIN_A_SPLIT_K)))
}

/// The length of each of the fewest equal blocks (the last one shorter) that cover `len` in
/// blocks of at most `most` (at least 1). Shared with the dots path's row and k blocks.
pub(crate) fn even_blocks(len: usize, most: usize) -> usize {
    len.div_ceil(len.div_ceil(most)).max(1)
}

#[cfg(test)]
mod tests {
    use super::{
        LINE_ALIGNED_MIN_TILES, SupBlocks, a_k_block, b_k_block, b_spreads_over_l1,
        columns_fit_l1_ways, columns_spread_over_l1, first_tile_rows, gemm_sup, packs_only_a,
        prefetches_b_rows, run_sup_tile, splits_k_over_large_c, sup_blocks,
    };
    use crate::check::{Expected, Rng, Storage, TestMatrix, Values};
    use crate::cntx::{PackAOnly, PackBRows, SupKernel, SupLimits};
    use crate::gks::supported_contexts;
    use crate::kernels::SupUkrArgs;
    use crate::types::{GemmPair, Scalar};
    use crate::view::MatRef;

    #[test]
    fn first_tile_lines_up_the_later_tiles_only_where_it_can() {
        let lined = 0x1000 as *const f64;
        let past = |bytes: usize| (0x1000 + bytes) as *const f64;
        let m = LINE_ALIGNED_MIN_TILES * 16;
        // 16 bytes past a line, columns 2 KiB apart: 6 rows bring row 6 to the next line.
        assert_eq!(first_tile_rows(past(16), 256, (m, 4), (16, 12)), 6);
        assert_eq!(first_tile_rows(past(56), 256, (m, 4), (16, 12)), 1);
        assert_eq!(
            first_tile_rows(past(8).cast::<f32>(), 64, (2 * m, 4), (32, 12)),
            14
        );
        // Already on a line; columns at different offsets in a line; an element split by
        // the line; too few tiles: MR.
        assert_eq!(first_tile_rows(lined, 256, (m, 4), (16, 12)), 16);
        assert_eq!(first_tile_rows(past(16), 257, (m, 4), (16, 12)), 16);
        assert_eq!(first_tile_rows(past(16), 4, (m, 4), (16, 12)), 16);
        assert_eq!(first_tile_rows(past(4), 256, (m, 4), (16, 12)), 16);
        assert_eq!(first_tile_rows(past(16), 256, (m - 1, 4), (16, 12)), 16);
        // C as wide as a tile: MR.
        assert_eq!(first_tile_rows(past(16), 256, (m, 12), (16, 12)), 16);
        // A negative column stride of whole lines lines up too.
        assert_eq!(first_tile_rows(past(16), -256, (m, 4), (16, 12)), 6);
    }

    /// The sup path on A at every element offset from a cache line, with columns a whole
    /// number of lines apart (a shorter first tile) or not, tall enough for the shift and
    /// not, on every configuration's sup kernel: exact against the reference, nothing
    /// written outside C.
    fn tiles_match_at_every_offset_from_a_line<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(41);
        let values = Values::SmallIntegers;
        let per_line = 64 / size_of::<T>();
        for cntx in supported_contexts() {
            let Some(sup) = T::kernel(cntx).sup() else {
                continue;
            };
            let mr = sup.tile().0;
            for (m, lda_pad) in [
                (LINE_ALIGNED_MIN_TILES * mr + 3, 0),
                (5 * mr - 1, 1),
                (mr + 2, 0),
            ] {
                let (n, k) = (5, 37);
                let lda = m.next_multiple_of(per_line) + lda_pad;
                let buf_len = lda * k + 2 * per_line;
                let mut buf = vec![T::zero(); buf_len];
                rng.fill(values, &mut buf);
                let to_line = buf.as_ptr().align_offset(64);
                for offset in 0..per_line {
                    let a = MatRef::col_major(&buf[to_line + offset..], m, k, lda).unwrap();
                    let b = TestMatrix::<T>::random(&mut rng, values, k, n, Storage::Col);
                    let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, Storage::Col);
                    let beta = [T::zero(), rng.value(values)][offset % 2];
                    let expected = Expected::new(T::one(), &a, &b.view(), beta, &mut c);
                    gemm_sup(
                        sup,
                        (None, None),
                        T::one(),
                        &a,
                        &b.view(),
                        beta,
                        &mut c.view_mut(),
                    )
                    .unwrap();
                    let what = format!("{}: {m}×{n}×{k}, lda {lda}, +{offset}", cntx.name());
                    let got = expected.compare(&c, k);
                    assert_eq!(got.residual, 0.0, "{what}: wrong values");
                    assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
                }
            }
        }
    }

    /// `run_sup_tile` on tiles of one whole vector (MR/2 rows) and r rows more with B's rows
    /// contiguous, for r up to one past what the kernel's `TransposedRemainder` takes, every
    /// width to NR and k either side of `TRANSPOSED_MIN_K`, C column- and row-stored, beta 0
    /// (NaN in C) and not: exact against the reference, nothing written outside C. Counts
    /// the tiles split, so that a configuration that takes remainders must split some here.
    fn remainder_rows_match<T>()
    where
        T: GemmPair<T, Acc = T> + Scalar,
    {
        let mut rng = Rng::new(43);
        let values = Values::SmallIntegers;
        for cntx in supported_contexts() {
            let Some(sup) = T::kernel(cntx).sup() else {
                continue;
            };
            let (mr, nr) = sup.tile();
            let rule = sup.transposed_remainder();
            let vector = mr / 2;
            let mut split = 0;
            for r in 1..=(rule.max_rows + 1).min(vector - 1) {
                let m = vector + r;
                for n in 1..=nr {
                    for (case, k) in [31, 32, 45].into_iter().enumerate() {
                        let a = TestMatrix::<T>::random(&mut rng, values, m, k, Storage::Col);
                        let b = TestMatrix::<T>::random(&mut rng, values, k, n, Storage::Row);
                        let st_c = [Storage::Col, Storage::Row][(n + case) % 2];
                        let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, st_c);
                        let alpha = rng.value(values);
                        let beta = [T::zero(), rng.value(values)][(r + case) % 2];
                        let expected = Expected::new(alpha, &a.view(), &b.view(), beta, &mut c);
                        let (a, b) = (a.view(), b.view());
                        let c_view = c.view_mut();
                        let args = SupUkrArgs {
                            m,
                            n,
                            k,
                            alpha,
                            a: a.as_ptr(),
                            cs_a: a.col_stride(),
                            b: b.as_ptr(),
                            rs_b: b.row_stride(),
                            cs_b: b.col_stride(),
                            beta,
                            c: c_view.ptr_at(0, 0),
                            rs_c: c_view.row_stride(),
                            cs_c: c_view.col_stride(),
                        };
                        // SAFETY: a tile within MR×NR of checked views (A column-stored, B
                        // row-stored, C exclusively borrowed); the context's kernel runs here.
                        unsafe { run_sup_tile(sup, &args) };
                        if k >= 32 && rule.rows_of(mr, m, n) > 0 {
                            split += 1;
                        }
                        let what = format!("{}: {m}×{n}×{k}, C {st_c:?}", cntx.name());
                        let got = expected.compare(&c, k);
                        assert_eq!(got.residual, 0.0, "{what}: wrong values");
                        assert_eq!(got.wrote_outside, None, "{what}: wrote outside C");
                    }
                }
            }
            if rule.max_rows > 0 {
                assert!(split > 0, "{}: no tile split", cntx.name());
            }
        }
    }

    #[test]
    fn remainder_rows_match_f32() {
        remainder_rows_match::<f32>();
    }

    #[test]
    fn remainder_rows_match_f64() {
        remainder_rows_match::<f64>();
    }

    #[test]
    fn remainder_rows_match_c32() {
        remainder_rows_match::<crate::types::c32>();
    }

    #[test]
    fn tiles_match_at_every_offset_from_a_line_f32() {
        tiles_match_at_every_offset_from_a_line::<f32>();
    }

    #[test]
    fn tiles_match_at_every_offset_from_a_line_f64() {
        tiles_match_at_every_offset_from_a_line::<f64>();
    }

    #[test]
    fn b_in_place_only_where_its_panels_spread_over_l1() {
        let buf = vec![0.0f64; 1024 * 400];
        let col_stored = |ld: usize| MatRef::col_major(&buf, 384, 12, ld).unwrap();
        // Columns 3 KiB and 5 KiB apart cycle through 4 sets: 3 lines each.
        assert!(b_spreads_over_l1(&col_stored(384), 12));
        assert!(b_spreads_over_l1(&col_stored(640), 12));
        // 4 KiB apart: all 12 (or 8) columns in one set; 6 KiB: 6 in each of two sets.
        assert!(!b_spreads_over_l1(&col_stored(512), 12));
        assert!(!b_spreads_over_l1(&col_stored(512), 8));
        assert!(b_spreads_over_l1(&col_stored(768), 12));
        // Rows of a row-stored B 8 KiB apart: eight k steps' lines in one or two sets.
        let row_stored = MatRef::col_major(&buf, 12, 384, 1024).unwrap().t();
        assert!(!b_spreads_over_l1(&row_stored, 12));
        let row_stored = MatRef::col_major(&buf, 12, 384, 384).unwrap().t();
        assert!(b_spreads_over_l1(&row_stored, 12));
        // A group of 6 columns of the aliasing B fits: 6 lines in one set (or 12 in two,
        // when a column's eight elements straddle two lines).
        assert!(b_spreads_over_l1(&col_stored(512), 6));
    }

    #[test]
    fn b_rows_prefetched_only_when_a_page_apart_spread_and_past_the_l2() {
        let buf = vec![0.0f64; 4096 * 200];
        // op(B) = Bᵀ of a column-major n×k B: rows ld elements apart, k rows.
        let rows = |ld: usize, k: usize| MatRef::col_major(&buf, 12, k, ld).unwrap().t();
        // 8000-byte rows over 200 k: 1.6 MB, spread over the L1's sets.
        assert!(prefetches_b_rows(&rows(1000, 200)));
        // 4000-byte rows share pages with their neighbours: the hardware follows them.
        assert!(!prefetches_b_rows(&rows(500, 200)));
        // 16 KiB apart: every row's lines in one set.
        assert!(!prefetches_b_rows(&rows(2048, 200)));
        // 8000-byte rows over 100 k: 800 KB, inside the L2.
        assert!(!prefetches_b_rows(&rows(1000, 100)));
        // Column-stored B: its columns are the streams, and the hardware follows them.
        assert!(!prefetches_b_rows(
            &MatRef::col_major(&buf, 200, 12, 1000).unwrap()
        ));
    }

    #[test]
    fn pack_a_only_follows_its_rule_and_needs_half_a_kc_of_k_at_most_256() {
        let buf = vec![0.0f64; 1024 * 400];
        let b = MatRef::col_major(&buf, 384, 12, 640).unwrap();
        assert!(packs_only_a(PackAOnly::WhenBSpreadsOverL1, &b, 12, 384));
        // With KC = 384, k = 192 takes it (KC/2), k = 191 does not.
        let k192 = MatRef::col_major(&buf, 192, 12, 640).unwrap();
        assert!(packs_only_a(PackAOnly::WhenBSpreadsOverL1, &k192, 12, 384));
        let k191 = MatRef::col_major(&buf, 191, 12, 640).unwrap();
        assert!(!packs_only_a(PackAOnly::WhenBSpreadsOverL1, &k191, 12, 384));
        // With KC = 768, k = 256 takes it (the cap), k = 255 does not.
        let k256 = MatRef::col_major(&buf, 256, 12, 640).unwrap();
        assert!(packs_only_a(PackAOnly::WhenBSpreadsOverL1, &k256, 12, 768));
        let k255 = MatRef::col_major(&buf, 255, 12, 640).unwrap();
        assert!(!packs_only_a(PackAOnly::WhenBSpreadsOverL1, &k255, 12, 768));
        assert!(!packs_only_a(PackAOnly::Never, &b, 12, 384));
        let aliasing = MatRef::col_major(&buf, 384, 12, 512).unwrap();
        assert!(!packs_only_a(
            PackAOnly::WhenBSpreadsOverL1,
            &aliasing,
            12,
            384
        ));
        assert!(packs_only_a(PackAOnly::Always, &aliasing, 12, 384));
    }

    /// Limits like skx's as of session 31, fixed here so that these tests do not move when
    /// skx is retuned, with B's k span unbounded; for the tests that ask a sup kernel about
    /// its limits.
    const LIMITS: SupLimits = SupLimits {
        max_a_col_stride_bytes: 2048,
        max_a_bytes: 4 << 20,
        far_a_min_n: 5,
        far_a_max_n: 64,
        far_a_min_n_c_rows: 3,
        far_a_max_short_k: 0,
        k_block_bytes: 256 << 10,
        max_c_bytes_if_k_split: 512 << 10,
        c_block_bytes_if_k_split: usize::MAX,
        max_b_k_span_bytes: usize::MAX,
        pack_a_only: PackAOnly::WhenBSpreadsOverL1,
        max_transposed_partial_column_bytes: 256,
        nt_partial_column_min_k: 32,
        tt_transposed: None,
        pack_b_rows: &[],
        a_by_blocks_min_copy_bytes: usize::MAX,
        pack_b_panels_min_k: usize::MAX,
        in_place_a_by_blocks_min_bytes: usize::MAX,
        in_place_a_by_blocks_min_col_bytes: usize::MAX,
    };

    /// A 16×12 f64 sup kernel with `limits`, only ever asked about them.
    fn kernel_with(limits: SupLimits) -> SupKernel<f64, f64> {
        fn never_called(_: &SupUkrArgs<f64, f64>) {}
        // SAFETY: the kernel is only asked about its limits, never run.
        unsafe { SupKernel::new("test", never_called, 16, 12, limits) }
    }

    /// A rule for op(B)'s contiguous rows that the tests vary field by field.
    const ROWS_RULE: PackBRows = PackBRows {
        b_bytes_over: 384 << 10,
        min_row_stride_bytes: 0,
        only_in_few_l1_sets: true,
        min_m: 0,
        max_m: 128,
        min_row_tiles_per_thread: 4,
    };

    /// op(B) = Bᵀ of a column-major n×k B with `ld` elements between op(B)'s rows: k×n.
    fn rows_of_b(data: &[f64], k: usize, n: usize, ld: usize) -> MatRef<'_, f64> {
        MatRef::col_major(&data[..ld * (k - 1) + n], n, k, ld)
            .unwrap()
            .t()
    }

    #[test]
    fn b_rows_go_to_the_loop_nest_by_any_rule_that_applies() {
        // haswell's rules: any rows past 4 MiB up to 128 rows; rows in few sets past 384 KiB
        // from four row tiles to 128 rows.
        const RULES: [PackBRows; 2] = [
            PackBRows {
                b_bytes_over: 4 << 20,
                only_in_few_l1_sets: false,
                min_row_tiles_per_thread: 0,
                ..ROWS_RULE
            },
            ROWS_RULE,
        ];
        let sup = kernel_with(SupLimits {
            pack_b_rows: &RULES,
            ..LIMITS
        });
        let data = vec![0.0f64; 4096 * 1024];
        let bt = |k, n, ld| rows_of_b(&data, k, n, ld);
        // Rows 16 KiB apart (one L1 set), 512 KiB: packed from 4 row tiles (64 rows) to 128.
        let b = bt(128, 512, 2048);
        for (m, packed) in [(63, false), (64, true), (128, true), (129, false)] {
            assert_eq!(
                sup.packs_b_with_rows_contiguous(m, 1, &b),
                packed,
                "m = {m}"
            );
        }
        // 384 KiB is read in place; rows spread over the L1 (ld 1030) too, below 4 MiB.
        assert!(!sup.packs_b_with_rows_contiguous(64, 1, &bt(96, 512, 2048)));
        assert!(!sup.packs_b_with_rows_contiguous(64, 1, &bt(128, 512, 1030)));
        // Rows 4 KiB (ld 512) and 2 KiB apart crowd few sets too.
        assert!(sup.packs_b_with_rows_contiguous(64, 1, &bt(128, 512, 512)));
        assert!(sup.packs_b_with_rows_contiguous(64, 1, &bt(256, 256, 256)));
        // Past 4 MiB any contiguous rows are packed, from one row, up to 128.
        assert!(sup.packs_b_with_rows_contiguous(1, 1, &bt(1024, 520, 1030)));
        assert!(!sup.packs_b_with_rows_contiguous(129, 1, &bt(1024, 520, 1030)));
        // B's columns contiguous: never.
        let b = MatRef::col_major(&data[..2048 * 1024], 2048, 1024, 2048).unwrap();
        assert!(!sup.packs_b_with_rows_contiguous(64, 1, &b));
        // No rules: never.
        let sup = kernel_with(LIMITS);
        assert!(!sup.packs_b_with_rows_contiguous(64, 1, &bt(128, 512, 2048)));
    }

    #[test]
    fn b_rows_rules_count_row_tiles_per_thread_and_ask_for_far_rows_and_enough_rows() {
        // skx's two rules, each on its own.
        const FEW_SETS: [PackBRows; 1] = [PackBRows {
            min_row_stride_bytes: 12 << 10,
            max_m: usize::MAX,
            ..ROWS_RULE
        }];
        const ANY_ROWS_FROM_128: [PackBRows; 1] = [PackBRows {
            only_in_few_l1_sets: false,
            min_m: 128,
            ..FEW_SETS[0]
        }];
        let data = vec![0.0f64; 8192 * 128];
        let bt = |k, n, ld| rows_of_b(&data, k, n, ld);
        // Rows 16 KiB apart, 1 MiB: four row tiles (16 rows each) per thread.
        let sup = kernel_with(SupLimits {
            pack_b_rows: &FEW_SETS,
            ..LIMITS
        });
        let b = bt(64, 2048, 2048);
        for (m, threads, packed) in [
            (64, 1, true),
            (63, 1, false),
            (64, 2, false),
            (127, 2, true),
            (126, 2, false),
            (4096, 1, true),
            (4096, 0, true),
        ] {
            assert_eq!(
                sup.packs_b_with_rows_contiguous(m, threads, &b),
                packed,
                "m = {m}, threads = {threads}"
            );
        }
        // Rows 8 KiB apart (one L1 set too) are nearer than the 12 KiB asked for.
        assert!(!sup.packs_b_with_rows_contiguous(256, 1, &bt(64, 1024, 1024)));
        assert!(sup.packs_b_with_rows_contiguous(256, 1, &bt(64, 1536, 1536)));
        // Rows spread over the L1 (ld 2056, a line further each row) only where the rule does
        // not ask for few sets, and then from its 128 rows.
        let spread = bt(64, 2048, 2056);
        assert!(!sup.packs_b_with_rows_contiguous(256, 1, &spread));
        let sup = kernel_with(SupLimits {
            pack_b_rows: &ANY_ROWS_FROM_128,
            ..LIMITS
        });
        assert!(sup.packs_b_with_rows_contiguous(128, 1, &spread));
        assert!(!sup.packs_b_with_rows_contiguous(127, 1, &spread));
        assert!(!sup.packs_b_with_rows_contiguous(128, 3, &spread));
    }

    #[test]
    fn k_split_over_a_large_c_is_left_to_packed_a() {
        let sup = kernel_with(LIMITS);
        // 256×512×512 f64: A 1 MiB (split), C 1 MiB.
        assert!(splits_k_over_large_c(&sup, 256, 512, 512));
        // Same A with C at exactly 512 KiB, or A at 512 KiB (not split), stay.
        assert!(!splits_k_over_large_c(&sup, 256, 256, 512));
        assert!(!splits_k_over_large_c(&sup, 256, 1024, 256));
        // A split with a small C (64×64×4096) stays; k_block_bytes = 0 never splits.
        assert!(!splits_k_over_large_c(&sup, 64, 64, 4096));
        let sup = kernel_with(SupLimits {
            k_block_bytes: 0,
            ..LIMITS
        });
        assert!(!splits_k_over_large_c(&sup, 256, 1024, 1024));
    }

    #[test]
    fn a_copied_whole_or_packed_by_blocks() {
        let sup = kernel_with(SupLimits {
            a_by_blocks_min_copy_bytes: 1 << 20,
            ..LIMITS
        });
        let buf = vec![0.0f64; 4096 * 64];
        let b = MatRef::col_major(&buf, 4096, 64, 4096).unwrap();
        // op(A) = Aᵀ, 64×4096 f64: 2 MiB by blocks; 64×2048 exactly 1 MiB too; 64×2047 whole.
        let at = |k: usize| MatRef::col_major(&buf, k, 64, 4096).unwrap().t();
        assert!(sup.packs_a_by_blocks(&at(4096), &b));
        assert!(sup.packs_a_by_blocks(&at(2048), &b));
        assert!(!sup.packs_a_by_blocks(&at(2047), &b));
        // Fewer rows than MR (16), however large: whole (Aᵀ 15×65536 f64, 7.5 MiB).
        let long = vec![0.0f64; 65536 * 16];
        let few_rows = MatRef::col_major(&long, 65536, 15, 65536).unwrap().t();
        assert!(!sup.packs_a_by_blocks(&few_rows, &b));
        let mr_rows = MatRef::col_major(&long, 65536, 16, 65536).unwrap().t();
        assert!(sup.packs_a_by_blocks(&mr_rows, &b));
        // A the kernel reads in place stays in place while its limits are usize::MAX,
        // however large.
        let a = MatRef::col_major(&buf, 64, 4096, 64).unwrap();
        assert!(!sup.packs_a_by_blocks(&a, &b));
        // usize::MAX: always whole.
        let whole = kernel_with(LIMITS);
        assert!(!whole.packs_a_by_blocks(&at(4096), &b));
    }

    #[test]
    fn a_in_place_packed_by_blocks_from_its_size_and_column_stride() {
        let sup = kernel_with(SupLimits {
            in_place_a_by_blocks_min_bytes: 2 << 20,
            in_place_a_by_blocks_min_col_bytes: 512,
            ..LIMITS
        });
        let buf = vec![0.0f64; 4096 * 128];
        let b = MatRef::col_major(&buf, 4096, 64, 4096).unwrap();
        let a = |m: usize, k: usize, ld: usize| MatRef::col_major(&buf, m, k, ld).unwrap();
        // 64×4096 f64, columns 512 bytes apart: 2 MiB by blocks; 64×4095 in place.
        assert!(sup.packs_a_by_blocks(&a(64, 4096, 64), &b));
        assert!(!sup.packs_a_by_blocks(&a(64, 4095, 64), &b));
        // Columns 256 bytes apart stay in place, unless the leading dimension spreads them.
        assert!(!sup.packs_a_by_blocks(&a(32, 8192, 32), &b));
        assert!(sup.packs_a_by_blocks(&a(32, 8192, 64), &b));
        // Aᵀ of a row-stored A has contiguous rows too.
        let at_of_rows = MatRef::row_major(&buf, 4096, 64, 64).unwrap().t();
        assert!(sup.packs_a_by_blocks(&at_of_rows, &b));
        // Fewer rows than MR (16): in place.
        let long = vec![0.0f64; 64 * 20000];
        let few_rows = MatRef::col_major(&long, 15, 20000, 64).unwrap();
        assert!(!sup.packs_a_by_blocks(&few_rows, &b));
        // The limits for A it cannot read in place are apart: Aᵀ stays whole here.
        let at = MatRef::col_major(&buf, 4096, 64, 4096).unwrap().t();
        assert!(!sup.packs_a_by_blocks(&at, &b));
    }

    #[test]
    fn b_with_long_rows_splits_k_by_its_span() {
        let buf = vec![0.0f32; 4096 * 1024];
        // Row-stored 1024×4096 f32 B: 16 KiB per row, 512 KiB → 32 rows a block.
        let rows = MatRef::col_major(&buf, 4096, 1024, 4096).unwrap().t();
        assert_eq!(b_k_block(&rows, 512 << 10), 32);
        // Uneven: 1000 rows in blocks of at most 32 → 32 blocks of 32 (the last 8).
        let rows = MatRef::col_major(&buf, 4096, 1000, 4096).unwrap().t();
        assert_eq!(b_k_block(&rows, 512 << 10), 32);
        // Column-stored B spans k·size: whole; and a span of 0 never splits.
        let cols = MatRef::col_major(&buf, 1024, 4096, 1024).unwrap();
        assert_eq!(b_k_block(&cols, 512 << 10), 1024);
        assert_eq!(b_k_block(&rows, 0), 1000);
    }

    #[test]
    fn pack_a_only_refuses_b_with_long_rows() {
        let buf = vec![0.0f64; 1024 * 1024];
        // Row-stored B, KC = 512 rows: 264 elements a row (a KC block spans 1.03 MiB)
        // refused, 256 (exactly 1 MiB) taken; both spread over the L1 sets. With fewer
        // rows than KC, k's span counts.
        let long = MatRef::col_major(&buf, 264, 1000, 264).unwrap().t();
        assert!(b_spreads_over_l1(&long, 6));
        assert!(!packs_only_a(PackAOnly::WhenBSpreadsOverL1, &long, 6, 512));
        let short = MatRef::col_major(&buf, 256, 1000, 256).unwrap().t();
        assert!(b_spreads_over_l1(&short, 6));
        assert!(packs_only_a(PackAOnly::WhenBSpreadsOverL1, &short, 6, 512));
        let long_but_few_rows = MatRef::col_major(&buf, 264, 496, 264).unwrap().t();
        assert!(packs_only_a(
            PackAOnly::WhenBSpreadsOverL1,
            &long_but_few_rows,
            6,
            512
        ));
    }

    #[test]
    fn tall_a_is_split_into_row_blocks_not_short_k_blocks() {
        let sup = kernel_with(LIMITS);
        let buf = vec![0.0f64; 4096 * 64];
        let b = |k, n| MatRef::col_major(&buf, k, n, k).unwrap();
        let blocks = |kc, rows, cols| SupBlocks { kc, rows, cols };
        // 3000×50 (1.2 MB): all of k (not blocks of 10); with one panel of C, all rows.
        assert_eq!(sup_blocks(&sup, 3000, &b(50, 5)), blocks(50, 3000, 5));
        // More panels: rows whose slice fits 256 KiB (655, in whole tiles).
        assert_eq!(sup_blocks(&sup, 3000, &b(50, 32)), blocks(50, 640, 32));
        // 2000×1000: k blocks of 128 at least (8 of 125), rows to match (262 → 256).
        assert_eq!(sup_blocks(&sup, 2000, &b(1000, 24)), blocks(125, 256, 24));
        // 64×4096 (2 MiB): k blocks of 512 hold all 64 rows, as before.
        assert_eq!(sup_blocks(&sup, 64, &b(4096, 64)), blocks(512, 64, 64));
        // Small A: one block.
        assert_eq!(sup_blocks(&sup, 100, &b(100, 64)), blocks(100, 100, 64));
    }

    #[test]
    fn where_k_is_split_c_goes_in_column_blocks_of_the_configured_bytes() {
        let sup = kernel_with(SupLimits {
            c_block_bytes_if_k_split: 128 << 10,
            ..LIMITS
        });
        let buf = vec![0.0f64; 4096 * 1000];
        let b = |k, n| MatRef::col_major(&buf[..k * n], k, n, k).unwrap();
        // 64×4096 A split into k blocks of 512: 128 KiB of 64 f64 rows is 256 columns, so
        // 1000 columns go in 4 blocks of 252 (21 panels of 12; the last one 244).
        assert_eq!(
            sup_blocks(&sup, 64, &b(4096, 1000)),
            SupBlocks {
                kc: 512,
                rows: 64,
                cols: 252
            }
        );
        // 2000 rows in blocks of 256 (k split): all columns at once, each A slice read by all
        // of them.
        assert_eq!(
            sup_blocks(&sup, 2000, &b(1000, 500)),
            SupBlocks {
                kc: 125,
                rows: 256,
                cols: 500
            }
        );
        // k not split: all columns at once, whatever C's size.
        assert_eq!(sup_blocks(&sup, 100, &b(100, 1000)).cols, 1000);
        // Fewer columns than one block holds: one block.
        assert_eq!(sup_blocks(&sup, 64, &b(4096, 200)).cols, 200);
    }

    #[test]
    fn b_panels_reread_by_several_row_tiles_take_k_blocks_that_stay_in_l1() {
        // 16×12 f64 tiles: a copied panel holds 32 KiB / (12·8) = 341 rows of k.
        let sup = kernel_with(SupLimits {
            pack_b_panels_min_k: 256,
            ..LIMITS
        });
        let data = vec![0.0f64; 1000 * 1000];
        // op(B) = Bᵀ of a column-major n×k B: k×n, rows contiguous, n·8 bytes apart.
        let bt = |k: usize, n: usize| MatRef::col_major(&data[..n * k], n, k, n).unwrap().t();
        // Four row tiles: copied, in blocks that fit the buffer.
        assert_eq!(super::b_panel_k_block(&sup, 64, &bt(1000, 100)), 341);
        assert_eq!(sup_blocks(&sup, 64, &bt(1000, 100)).kc, 334);
        // Two row tiles, read in place: 512 lines of B per block.
        assert_eq!(super::b_panel_k_block(&sup, 32, &bt(1000, 100)), 512);
        assert_eq!(sup_blocks(&sup, 32, &bt(1000, 100)).kc, 500);
        // One row tile, k under the configuration's 256, rows more than a page apart, or
        // op(B)'s columns contiguous: all of k.
        assert_eq!(super::b_panel_k_block(&sup, 16, &bt(1000, 100)), 1000);
        assert_eq!(super::b_panel_k_block(&sup, 32, &bt(255, 100)), 255);
        assert_eq!(super::b_panel_k_block(&sup, 32, &bt(900, 1000)), 900);
        let b = MatRef::col_major(&data[..1000 * 100], 1000, 100, 1000).unwrap();
        assert_eq!(super::b_panel_k_block(&sup, 64, &b), 1000);
        // Rows under a line apart (4 f64): copied with four row tiles, else all of k.
        assert_eq!(super::b_panel_k_block(&sup, 64, &bt(1000, 4)), 341);
        assert_eq!(super::b_panel_k_block(&sup, 32, &bt(1000, 4)), 1000);
        // A configuration that never copies B's panels: all of k.
        assert_eq!(
            super::b_panel_k_block(&kernel_with(LIMITS), 64, &bt(1000, 100)),
            1000
        );
    }

    #[test]
    fn column_blocks_are_whole_panels_and_even() {
        assert_eq!(super::column_block(1000, 12, 256), 252);
        assert_eq!(super::column_block(4096, 6, 327), 318);
        // At least one panel a block, however few bytes are allowed.
        assert_eq!(super::column_block(100, 12, 1), 12);
        // One block: exactly n.
        assert_eq!(super::column_block(100, 12, 100), 100);
        assert_eq!(super::column_block(0, 12, 100), 0);
    }

    #[test]
    fn far_apart_columns_of_a_in_place_only_for_a_few_columns_of_c() {
        let sup = kernel_with(LIMITS);
        // 3000×50 f64, columns 24000 bytes apart: in place for 5..=64 columns of C.
        for n in [5, 16, 64] {
            assert!(sup.suits(3000, n, 50, Some(3000)), "{n}");
        }
        for n in [1, 4, 65, 1000] {
            assert!(!sup.suits(3000, n, 50, Some(3000)), "{n}");
        }
        // Not a copy of op(A) (stride m), not columns 4 KiB apart, not past max_a_bytes.
        assert!(!sup.suits(3000, 16, 50, None));
        assert!(!sup.suits(512, 16, 50, Some(512)));
        assert!(!sup.suits(3000, 16, 500, Some(3000)));
        // Near columns take any n.
        assert!(sup.suits(256, 1000, 50, Some(256)));
    }

    #[test]
    fn far_apart_columns_of_a_in_place_for_short_k_where_they_fit_the_l1_ways() {
        let sup = kernel_with(SupLimits {
            far_a_max_short_k: 32,
            ..LIMITS
        });
        // 515 f64 rows (4120 bytes: six of 16 columns' lines share a set, past the spread
        // test's four) and 323 (2584 bytes): in place up to k = 32 from 48 columns of C.
        for (m, n, k) in [(515, 48, 32), (515, 1000, 1), (323, 97, 15)] {
            assert!(sup.suits(m, n, k, Some(m)), "{m}×{n}×{k}");
            // Not for a row-stored C, not for a copy of op(A).
            assert!(!sup.suits_row_stored_c(m, n, k, Some(m)), "{m}×{n}×{k}");
            assert!(!sup.suits(m, n, k, None), "{m}×{n}×{k}");
        }
        for (m, n, k) in [(515, 48, 33), (515, 47, 32), (512, 100, 4), (1536, 100, 4)] {
            assert!(!sup.suits(m, n, k, Some(m)), "{m}×{n}×{k}");
        }
        // Off, the limit holds at any k.
        assert!(!kernel_with(LIMITS).suits(515, 100, 4, Some(515)));
        // Eight lines a set fit (6 KiB: two sets), sixteen do not (4 KiB multiples).
        assert!(columns_fit_l1_ways(6144) && columns_fit_l1_ways(4120));
        assert!(!columns_fit_l1_ways(4096) && !columns_fit_l1_ways(12288));
    }

    #[test]
    fn far_apart_columns_of_a_must_spread_over_l1_sets() {
        // 4 KiB multiples share one set (and its neighbour); 6 KiB alternates two.
        for stride in [2048, 4096, 6144, 8192, 12288, 16384] {
            assert!(!columns_spread_over_l1(stride), "{stride}");
        }
        // 3 and 5 KiB cycle through four sets, 2400 and 8000 bytes through all.
        for stride in [2400, 3072, 5120, 8000, 24000] {
            assert!(columns_spread_over_l1(stride), "{stride}");
        }
    }

    #[test]
    fn k_blocks_split_only_large_a_and_evenly() {
        // 64×4096 f64 (2 MiB) against 256 KiB blocks: 512 columns each.
        assert_eq!(a_k_block(64, 4096, 8, 256 << 10), Some(512));
        // Uneven: 64×4000 in blocks of at most 512 → 8 blocks of 500.
        assert_eq!(a_k_block(64, 4000, 8, 256 << 10), Some(500));
        // Tall: 3000×1000 would take 10 columns a block; MIN_A_SPLIT_K (128) → 8 of 125.
        assert_eq!(a_k_block(3000, 1000, 8, 256 << 10), Some(125));
        // 16×4096 f64 is 512 KiB, not more than twice 256 KiB: whole; so are block size 0
        // and k = 0.
        assert_eq!(a_k_block(16, 4096, 8, 256 << 10), None);
        assert_eq!(a_k_block(64, 4096, 8, 0), None);
        assert_eq!(a_k_block(64, 0, 8, 256 << 10), None);
        // A column bigger than the block, k under MIN_A_SPLIT_K: one block of all of k.
        assert_eq!(a_k_block(1 << 20, 7, 8, 1024), Some(7));
    }
}
