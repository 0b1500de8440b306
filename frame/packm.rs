//! Packing (BLIS "packm"): copies a block of A or B into the contiguous micropanels the
//! microkernel streams through, applying the operand's conjugation and zero-padding the
//! last, partial panel so the kernel never sees an edge.
//!
//! ```text
//!   A block (m×k, any strides)          packed: ⌈m/MR⌉ panels, each MR×k, column after column
//!   ┌──────────────┐                    panel 0: a00 a10 .. a(MR-1)0 | a01 a11 .. | ...
//!   │ rows 0..MR   │ → panel 0          panel 1: ...
//!   │ rows MR..2MR │ → panel 1          last panel: rows past m are 0
//!   └──────────────┘
//! ```
//!
//! B (k×n) packs the same way as Bᵀ (n×k) into NR-wide panels, which is exactly the row-major
//! k×NR micropanel layout the kernel contract asks for. Called by the loop nest
//! (`frame/l3/gemm.rs`) once per block; the kernel contract is in `kernels/mod.rs`.

use std::ops::Range;

use crate::cntx::GemmKernel;
use crate::kernels::TransposeUkr;
use crate::prefetch::{Level, prefetch_bytes};
use crate::types::Element;
use crate::view::MatRef;

/// Packs panels `panels` (of ⌈m/`mr`⌉) of the `m`×`k` view `a` into `dst`, which holds
/// exactly those panels: panel `p` goes to `dst[(p - panels.start)*mr*k ..][.. mr*k]`. Threads
/// of a team each pack their own range of panels of the same block.
///
/// Plainly, it is this loop (done as a copy when a panel's rows are contiguous, as 8×8
/// transposes when its columns are — with the configuration's packing kernel `transpose`
/// where it has one — and otherwise with the loop order that reads memory in order):
///
/// ```text
/// for panel in panels, for p in 0..k, for i in 0..mr:
///     dst[(panel - panels.start)*mr*k + p*mr + i] =
///         if row < m { op(a[row, p]) } else { 0 }          // row = panel*mr + i
/// ```
///
/// Panics (a bug in the caller, caught at the API boundary) if `dst` has the wrong size.
pub(crate) fn pack_a_panels<T: Element>(
    a: &MatRef<T>,
    mr: usize,
    panels: Range<usize>,
    dst: &mut [T],
    transpose: Option<TransposeUkr<T>>,
) {
    let (m, k) = (a.nrows(), a.ncols());
    assert!(panels.end <= m.div_ceil(mr) && dst.len() == panels.len() * mr * k);
    if k == 0 {
        return;
    }
    if a.row_stride() == 1 {
        copy_columns(a, mr, panels, dst);
        return;
    }
    for (panel, dst) in panels.zip(dst.chunks_exact_mut(mr * k)) {
        let first = panel * mr;
        pack_panel(a, first, mr.min(m - first), mr, dst, transpose);
    }
}

/// Packs panels `panels` of `a` for `kernel`'s A operand: its MR, its packing kernel, and its
/// k grouping ([`GemmKernel::with_k_group`]); `dst` holds `panels.len()·MR·padded k`
/// elements. The loop nest and the sandboxes pack through this and [`pack_b_for`].
pub(crate) fn pack_a_for<A: Element, B: Element>(
    kernel: &GemmKernel<A, B>,
    a: &MatRef<A>,
    panels: Range<usize>,
    dst: &mut [A],
) {
    let mr = kernel.blocksizes().mr;
    match kernel.k_group() {
        1 => pack_a_panels(a, mr, panels, dst, kernel.pack_transposes().0),
        _ => {
            let kp = kernel.padded_k(a.ncols());
            pack_panels_k_grouped(a, mr, panels, dst, kernel.k_groups().0, kp)
        }
    }
}

/// [`pack_a_for`] for B: panels of `b` (k×n) as `kernel`'s B operand.
pub(crate) fn pack_b_for<A: Element, B: Element>(
    kernel: &GemmKernel<A, B>,
    b: &MatRef<B>,
    panels: Range<usize>,
    dst: &mut [B],
) {
    let nr = kernel.blocksizes().nr;
    match kernel.k_group() {
        1 => pack_b_panels(b, nr, panels, dst, kernel.pack_transposes().1),
        _ => {
            let kp = kernel.padded_k(b.nrows());
            pack_panels_k_grouped(&b.t(), nr, panels, dst, kernel.k_groups().1, kp)
        }
    }
}

/// Panels of `a` (m×k) with `g` consecutive k values interleaved per row, k padded with
/// zeros to `kp` (a multiple of `g` and at least k): `dst[slot·mr·kp + (p/g)·mr·g + i·g +
/// p%g] = op(a)[row, p]` (zero past m or k), the VNNI layout. Whole groups of a panel's
/// real rows are copied with the source's smaller stride innermost (vectorized copies for
/// unit strides, [`copy_full_groups`]); the last partial group and the padding rows go
/// element by element.
fn pack_panels_k_grouped<T: Element>(
    a: &MatRef<T>,
    mr: usize,
    panels: Range<usize>,
    dst: &mut [T],
    g: usize,
    kp: usize,
) {
    let (m, k) = (a.nrows(), a.ncols());
    assert!(kp >= k && kp.is_multiple_of(g));
    assert!(panels.end <= m.div_ceil(mr) && dst.len() == panels.len() * mr * kp);
    let conj = a.is_conj();
    let (rs, cs) = (a.row_stride(), a.col_stride());
    let op = |v: T| if conj { v.conj() } else { v };
    let full_groups = k / g;
    for (panel, out) in panels.zip(dst.chunks_exact_mut(mr * kp.max(1))) {
        let first = panel * mr;
        let rows = mr.min(m - first);
        // The common cases (unit stride along k or along m, no conjugation, the group sizes
        // kernels use) copy whole groups with the group size a constant, which vectorizes;
        // the partial group and the padding follow below.
        let done = !conj
            && match g {
                2 => copy_full_groups::<T, 2>(a, first, rows, full_groups, mr, out),
                4 => copy_full_groups::<T, 4>(a, first, rows, full_groups, mr, out),
                32 => copy_full_groups::<T, 32>(a, first, rows, full_groups, mr, out),
                64 => copy_full_groups::<T, 64>(a, first, rows, full_groups, mr, out),
                _ => false,
            };
        for (q, group) in out.chunks_exact_mut(mr * g).enumerate() {
            if q < full_groups && done {
                group[rows * g..].fill(T::zero());
            } else if q < full_groups {
                let at = |i: usize, r: usize| {
                    // SAFETY: row first + i < m and column q·g + r < k (a whole group).
                    op(unsafe { a.read_stored(first + i, q * g + r) })
                };
                if rs.unsigned_abs() <= cs.unsigned_abs() {
                    for r in 0..g {
                        for i in 0..rows {
                            group[i * g + r] = at(i, r);
                        }
                    }
                } else {
                    for i in 0..rows {
                        for r in 0..g {
                            group[i * g + r] = at(i, r);
                        }
                    }
                }
                group[rows * g..].fill(T::zero());
            } else {
                for i in 0..mr {
                    for r in 0..g {
                        let (row, p) = (first + i, q * g + r);
                        group[i * g + r] = if i < rows && p < k {
                            // SAFETY: row < m and p < k: inside the view.
                            op(unsafe { a.read_stored(row, p) })
                        } else {
                            T::zero()
                        };
                    }
                }
            }
        }
    }
}

/// The first `full_groups` whole groups of `G` k values of rows `first..first + rows` of
/// `a` into the panel `out` (`out[q·mr·G + i·G + r] = a[first + i, q·G + r]`), when `a` has
/// unit stride along k (each row's group is one contiguous copy) or along m (G columns
/// interleaved, which the compiler turns into vector shuffles). Conjugation is the caller's
/// business. Returns false, having written nothing, for any other layout.
fn copy_full_groups<T: Element, const G: usize>(
    a: &MatRef<T>,
    first: usize,
    rows: usize,
    full_groups: usize,
    mr: usize,
    out: &mut [T],
) -> bool {
    let (rs, cs) = (a.row_stride(), a.col_stride());
    // Element (first, 0); every element read below is (first + i, p) with i < rows,
    // p < full_groups·G ≤ k, inside the view.
    let base = a.as_ptr().wrapping_offset(first as isize * rs);
    if cs == 1 {
        for i in 0..rows {
            // SAFETY: row first + i holds k ≥ full_groups·G contiguous readable elements
            // (unit column stride), for the view's lifetime.
            let row = unsafe {
                std::slice::from_raw_parts(base.offset(i as isize * rs), full_groups * G)
            };
            for (q, src) in row.chunks_exact(G).enumerate() {
                out[q * mr * G + i * G..][..G].copy_from_slice(src);
            }
        }
        true
    } else if rs == 1 {
        for q in 0..full_groups {
            // SAFETY: column q·G + r (< k) holds rows first..first + rows contiguously
            // (unit row stride), readable for the view's lifetime.
            let columns: [&[T]; G] = std::array::from_fn(|r| unsafe {
                std::slice::from_raw_parts(base.offset((q * G + r) as isize * cs), rows)
            });
            let group = &mut out[q * mr * G..][..rows * G];
            for (i, dst) in group.chunks_exact_mut(G).enumerate() {
                for (r, d) in dst.iter_mut().enumerate() {
                    *d = columns[r][i];
                }
            }
        }
        true
    } else {
        false
    }
}

/// Packs panels `panels` (of ⌈n/`nr`⌉) of the `k`×`n` view `b`, each `nr` columns stored row
/// after row (`dst[(panel - panels.start)*k*nr + p*nr + j]`), zero-padded past `n`.
pub(crate) fn pack_b_panels<T: Element>(
    b: &MatRef<T>,
    nr: usize,
    panels: Range<usize>,
    dst: &mut [T],
    transpose: Option<TransposeUkr<T>>,
) {
    pack_a_panels(&b.t(), nr, panels, dst, transpose)
}

/// Packs rows `first..first+rows` of `a` into one `mr`-row panel `dst` (`mr*k` elements).
fn pack_panel<T: Element>(
    a: &MatRef<T>,
    first: usize,
    rows: usize,
    mr: usize,
    dst: &mut [T],
    transpose: Option<TransposeUkr<T>>,
) {
    let k = a.ncols();
    let conj = a.is_conj();
    let read = |i: usize, p: usize| {
        // SAFETY: i < first + rows <= m and p < k: in range of the view.
        let v = unsafe { a.read_stored(first + i, p) };
        if conj { v.conj() } else { v }
    };
    debug_assert!(a.row_stride() != 1);
    if a.col_stride() == 1 {
        transpose_rows(a, first, rows, mr, dst, transpose);
    } else if a.row_stride().unsigned_abs() <= a.col_stride().unsigned_abs() {
        // General strides, rows closer together in memory: walk down each column.
        for (p, column) in dst.chunks_exact_mut(mr).enumerate() {
            for (i, d) in column[..rows].iter_mut().enumerate() {
                *d = read(i, p);
            }
            column[rows..].fill(T::zero());
        }
    } else {
        // General strides, columns closer together: walk along each row.
        for i in 0..rows {
            for p in 0..k {
                dst[p * mr + i] = read(i, p);
            }
        }
        if rows < mr {
            for column in dst.chunks_exact_mut(mr) {
                column[rows..].fill(T::zero());
            }
        }
    }
}

/// [`pack_a_panels`] for a source whose columns are contiguous (unit row stride): a copy,
/// column by column across all the panels, so each source column is read as one run of
/// memory. (Panel by panel, every k step of a panel jumped to a new column, often a new
/// page; on 4096×16×4096 dgemm that was 60 % of the time, in `memmove`, measured with perf.)
fn copy_columns<T: Element>(a: &MatRef<T>, mr: usize, panels: Range<usize>, dst: &mut [T]) {
    // The common MRs get a copy of known length: `copy_from_slice` with a run-time length
    // is a `memmove` call per MR elements (1.9 % of dgemm 2048³ in perf, as much as the
    // rest of packing A).
    // The NRs are here too: B with unit column stride (op(B) = Bᵀ) packs through this. On a
    // 384×240 block of B (ld 1024), fixed-size against run-time-length copies, one column at
    // a time: NR = 6 f32 49 → 25 µs, f64 49 → 40; NR = 12 f64 65 → 39, f32 24 → 20. NR = 3
    // (haswell's complex tiles): cgemm NT 16×4096×4096 16.2 GFLOPS with `copy_columns_any`.
    match mr {
        2 => copy_columns_mr::<T, 2>(a, panels, dst),
        3 => copy_columns_mr::<T, 3>(a, panels, dst),
        4 => copy_columns_mr::<T, 4>(a, panels, dst),
        6 => copy_columns_mr::<T, 6>(a, panels, dst),
        8 => copy_columns_mr::<T, 8>(a, panels, dst),
        12 => copy_columns_mr::<T, 12>(a, panels, dst),
        16 => copy_columns_mr::<T, 16>(a, panels, dst),
        32 => copy_columns_mr::<T, 32>(a, panels, dst),
        _ => copy_columns_any(a, mr, panels, dst),
    }
}

/// [`copy_columns`] for MR = `MR`: full panels by fixed-size copies, a partial last panel by
/// [`copy_columns_any`]. Columns go [`COPY_STEP`] at a time, each panel taking its
/// COPY_STEP·MR elements of them before the next panel: whole cache lines of the panel at
/// once.
fn copy_columns_mr<T: Element, const MR: usize>(
    a: &MatRef<T>,
    panels: Range<usize>,
    dst: &mut [T],
) {
    let m = a.nrows();
    let full_end = panels.end.min(m / MR).max(panels.start);
    if a.is_conj() || full_end == panels.start {
        copy_columns_any(a, MR, panels, dst);
        return;
    }
    let k = a.ncols();
    let panel_len = MR * k;
    let (full, partial) = dst.split_at_mut((full_end - panels.start) * panel_len);
    let run = panels.start * MR..full_end * MR;
    let mut columns: [&[T]; COPY_STEP] = [&[]; COPY_STEP];
    let prefetch =
        a.col_stride().unsigned_abs() * size_of::<T>() < PREFETCH_MAX_COLUMN_STRIDE_BYTES;
    for p0 in (0..k).step_by(COPY_STEP) {
        let step = COPY_STEP.min(k - p0);
        for (i, column) in columns[..step].iter_mut().enumerate() {
            let p = p0 + i;
            if prefetch && p + PREFETCH_COLUMNS < k {
                let ahead = &unit_stride_column(a, p + PREFETCH_COLUMNS)[run.clone()];
                prefetch_bytes(ahead.as_ptr(), size_of_val(ahead), Level::L2);
            }
            *column = unit_stride_column(a, p);
        }
        for (slot, panel) in (panels.start..full_end).enumerate() {
            let out = &mut full[slot * panel_len + p0 * MR..][..step * MR];
            for (column, out) in columns[..step].iter().zip(out.chunks_exact_mut(MR)) {
                let src: &[T; MR] = column[panel * MR..][..MR].try_into().expect("MR elements");
                let out: &mut [T; MR] = out.try_into().expect("MR elements");
                *out = *src;
            }
        }
    }
    copy_columns_any(a, MR, full_end..panels.end, partial);
}

/// The columns [`copy_columns_mr`] takes at a time: 8 columns of any panel it copies are
/// whole 64-byte lines (MR·size is a multiple of 8 bytes). One column at a time, a panel of
/// 6 f32 took a third of a line per column, and the panels' lines, `panel_len` apart (a
/// multiple of 1 or 4 KiB), fell into a few L1 sets. Measured on 384-column blocks (ld 1024,
/// one thread, best of 7×200, alternated; µs, one column → 8 at a time): A of 240 rows, f32
/// MR = 16 21–22 → 12–13, f64 MR = 16 35–37 → 24, f64 MR = 8 (ld 1000) 49 → 25, f32 MR = 32
/// 9.2–9.3 → 9.9–10.0 (the one loss: 7 panels, each a line pair per column); B of 240 columns
/// as op(B) = Bᵀ, NR = 6 f32 28–31 → 21–27, f64 44–45 → 28–29, NR = 12 f64 34–40 → 23–25,
/// f32 21 → 13.6.
const COPY_STEP: usize = 8;

/// How many columns ahead [`copy_columns_mr`] prefetches its source run. A big A's columns
/// are a page or more apart, so the hardware prefetcher, which stops at page boundaries,
/// starts each column cold; from memory that made packing A a latency-bound 2.3 % of dgemm
/// 2048³. Eight columns ahead into L2 halved its share in perf (2.3 → 1.1 %); 4 into L1 and
/// 16 into L2 were no better (docs/Performance.md). That was a Zen 4; since session 38 only
/// columns less than a page apart are prefetched ([`PREFETCH_MAX_COLUMN_STRIDE_BYTES`]).
const PREFETCH_COLUMNS: usize = 8;

/// [`copy_columns_mr`] prefetches only a source whose columns lie closer than this (a
/// page). The rule serves B too where op(B) = Bᵀ packs through here (NT 200×4096×4096 on
/// the Zen 3: 1.05, squares NT 1.01–1.05). Columns a page or more apart, each run read from memory, are left to the hardware
/// prefetcher: the software bursts on top of its eight streams made packing A slower.
/// Without them dgemm 4096×16×4096 NN read 1.00–1.13× on a Zen 3 (haswell; 4096×32–64
/// ×4096 1.05–1.06), and on the lent Xeon (skx kernels) its ratio to OpenBLAS went
/// 0.62–0.65 → 0.76–0.77 (4096×32×4096 0.60–0.69 → 0.74). sgemm's ratio there went
/// 1.21–1.25 → 1.32–1.41 at 4096×16×4096, but on the Zen 3 sgemm read 0.92–1.03; squares
/// 512³–3072³ moved 0.95–1.03 on both, inside the noise. On the Zen 4 of session 33 such
/// columns gained from the prefetch (dgemm 2048³, above); that machine was not at hand to
/// measure this rule. Closer columns keep the prefetch: without it at all, NN
/// 200×4096×4096 (A's columns 1600 bytes apart, repacked for every B block) lost 0.87–0.94
/// in session 37 (docs/Performance.md, "Packing's prefetch by column stride").
const PREFETCH_MAX_COLUMN_STRIDE_BYTES: usize = 4096;

/// Column `p` of a view with unit row stride, as a slice.
fn unit_stride_column<'a, T: Element>(a: &MatRef<'a, T>, p: usize) -> &'a [T] {
    assert!(a.row_stride() == 1 && p < a.ncols());
    // SAFETY: column p < k of a checked view with unit row stride holds nrows elements in a
    // row.
    unsafe { std::slice::from_raw_parts(a.as_ptr().offset(p as isize * a.col_stride()), a.nrows()) }
}

/// [`copy_columns`] for any MR, conjugating if the view says so.
fn copy_columns_any<T: Element>(a: &MatRef<T>, mr: usize, panels: Range<usize>, dst: &mut [T]) {
    let (m, k) = (a.nrows(), a.ncols());
    let conj = a.is_conj();
    let panel_len = mr * k;
    for p in 0..k {
        let column = unit_stride_column(a, p);
        for (slot, panel) in panels.clone().enumerate() {
            let first = panel * mr;
            let rows = mr.min(m - first);
            let src = &column[first..first + rows];
            let out = &mut dst[slot * panel_len + p * mr..][..mr];
            if conj {
                for (d, s) in out.iter_mut().zip(src) {
                    *d = s.conj();
                }
            } else {
                out[..rows].copy_from_slice(src);
            }
            out[rows..].fill(T::zero());
        }
    }
}

/// Packs the whole 8-deep blocks of a panel of exactly ROWS (< 8) rows of a source with unit
/// column stride (`dst` is the panel, ld ROWS): each block's ROWS source rows
/// are copied into an 8×8 stack tile, transposed there by `transpose`, and each of its 8
/// columns' first ROWS elements copied out. Three passes through L1 instead of one, but every
/// move is a vector or a fixed-size copy. Element by element, the B panels of the AVX2
/// kernels (NR = 6) took 8–9 % of forced-haswell sgemm 512³ and 1024³ (perf). Measured on a
/// 384×240 block of a column-major B (ldb 1024, one thread, best of 7×200, the two ways
/// alternated): f32 31–54 → 24–25 µs. Only for 4-byte elements: for f64 (and c32, moved as
/// f64) element by element was as fast or faster (42 against 43–58 µs).
fn transpose_narrow<T: Element, const ROWS: usize>(
    a: &MatRef<T>,
    first: usize,
    dst: &mut [T],
    transpose: TransposeUkr<T>,
) {
    const B: usize = 8;
    let k = a.ncols();
    debug_assert!(ROWS < B && a.col_stride() == 1 && dst.len() == ROWS * k);
    debug_assert!(first + ROWS <= a.nrows());
    let rs = a.row_stride();
    let mut tile_in = [T::zero(); B * B];
    let mut tile_out = [T::zero(); B * B];
    for (block, out) in dst.chunks_exact_mut(B * ROWS).enumerate() {
        let p0 = block * B;
        for (i, tile_row) in tile_in.chunks_exact_mut(B).take(ROWS).enumerate() {
            // SAFETY: row first + i < m of the view, columns p0..p0 + 8 <= k (a whole block),
            // contiguous along k (unit column stride).
            let src = unsafe {
                std::slice::from_raw_parts(a.as_ptr().offset((first + i) as isize * rs).add(p0), B)
            };
            tile_row.copy_from_slice(src);
        }
        // SAFETY: both tiles are 8×8 with leading dimension 8 and separate; the context that
        // supplied `transpose` runs on this CPU.
        unsafe { transpose(tile_in.as_ptr(), B as isize, tile_out.as_mut_ptr(), B, B) };
        for (column, packed) in tile_out.chunks_exact(B).zip(out.chunks_exact_mut(ROWS)) {
            packed.copy_from_slice(&column[..ROWS]);
        }
    }
}

/// The fewest columns of k's remainder (past the whole 8-wide blocks) that [`transpose_rows`]
/// hands to the packing kernel as one narrower block; fewer go element by element. Measured
/// on the Zen 3 of session 61 through the narrow path (`l3/narrow.rs`, TN, A copied), ns,
/// element by element → kernel: sgemm 2000×2×12 8342 → 5375, 248×2×5 707 → 626, 494×5×6 2789
/// → 2380; dgemm 2000×2×12 13781 → 9192, 300×2×6 1664 → 1561; but at k = 3 the kernel's call
/// per 8 rows lost (dgemm 300×4×3 654 → 754, sgemm 40×2×3 177 → 189).
const KERNEL_MIN_REMAINDER: usize = 4;

/// [`pack_panel`] for a source whose rows are contiguous along k (unit column stride): each
/// source row becomes a packed column's worth of scattered writes, so the panel goes by 8×8
/// blocks, read row by row and written column by column: by the packing kernel where there
/// is one, else by a portable loop. A whole f32 panel of 6 rows goes by 8-deep blocks
/// through a stack tile ([`transpose_narrow`]) where there is a packing kernel; other panels
/// less than 8 tall by [`interleave_panel`]; k's remainder past the whole blocks by one
/// narrower block of the kernel's (from [`KERNEL_MIN_REMAINDER`] columns), else (and for
/// those 6-row panels) element by element.
/// Conjugation, if any, is one pass over the panel at the end.
fn transpose_rows<T: Element>(
    a: &MatRef<T>,
    first: usize,
    rows: usize,
    mr: usize,
    dst: &mut [T],
    transpose: Option<TransposeUkr<T>>,
) {
    const B: usize = 8;
    let k = a.ncols();
    debug_assert!(a.col_stride() == 1 && rows <= mr && dst.len() == mr * k);
    let rs = a.row_stride();
    let row = |i: usize| a.as_ptr().wrapping_offset((first + i) as isize * rs);
    // Whole f32 panels of 6 rows go through a stack tile where there is a packing kernel
    // (`transpose_narrow`); other panels less than 8 tall by `interleave_panel`.
    let narrow_f32 = transpose.filter(|_| rows == 6 && mr == 6 && size_of::<T>() == 4);
    if rows < B && narrow_f32.is_none() {
        interleave_panel(a, first, rows, mr, dst);
        conj_panel_rows(a.is_conj(), rows, mr, dst);
        return;
    }
    let full_p = k / B * B;
    // Rows in blocks of 8; a remainder of a panel at least 8 tall by one more block ending at
    // its last row, overlapping the one before (its rows are written twice, with the same
    // values): NR = 12 panels are then two vector blocks instead of one and four rows element
    // by element (1 % of dgemm 2048³ went to that loop, measured with perf).
    let last_block = (rows > B && !rows.is_multiple_of(B)).then(|| rows - B);
    let blocks = (0..rows / B * B).step_by(B).chain(last_block);
    // With a packing kernel, k's remainder past the whole blocks too, as one narrower block,
    // from [`KERNEL_MIN_REMAINDER`] columns (in the blocks of 8 rows: not for the 6-row
    // panels).
    let remainder = match transpose {
        Some(_) if rows >= B && k - full_p >= KERNEL_MIN_REMAINDER => k - full_p,
        _ => 0,
    };
    for i0 in blocks {
        for p0 in (0..full_p + remainder).step_by(B) {
            let cols = B.min(k - p0);
            let out = &mut dst[p0 * mr + i0..][..(cols - 1) * mr + B];
            match transpose {
                // SAFETY: source rows first+i0.. +8 (< first + rows <= m) at columns
                // p0..p0+cols (<= k) are in the view, contiguous along p; `out` covers columns
                // p0..p0+cols of the panel at rows i0..i0+8 with leading dimension mr, and is
                // a separate buffer; 1 <= cols <= 8. The context that supplied `transpose`
                // runs on this CPU.
                Some(t) => unsafe { t(row(i0).add(p0), rs, out.as_mut_ptr(), mr, cols) },
                None => {
                    for ii in 0..B {
                        // SAFETY: as above, one source row of 8.
                        let src = unsafe { std::slice::from_raw_parts(row(i0 + ii).add(p0), B) };
                        for (pp, &v) in src.iter().enumerate() {
                            out[pp * mr + ii] = v;
                        }
                    }
                }
            }
        }
    }
    if let Some(t) = narrow_f32 {
        transpose_narrow::<T, 6>(a, first, dst, t);
    }
    // Without a packing kernel, k's remainder past the whole blocks column by column of the
    // panel: each k step's `rows` elements written side by side. Row by row (each element a
    // whole panel column from the last) this loop was 41 % of a dgemm TN 638×17×5 call, where
    // all of k is the remainder (`perf`, session 55); column by column it ran at about 2
    // cycles an element, two thirds of sgemm TN 248×2×5 (session 61, Zen 3), where the
    // kernel's masked blocks took its place.
    for (p, column) in dst
        .chunks_exact_mut(mr)
        .enumerate()
        .skip(full_p + remainder)
    {
        for (i, d) in column[..rows].iter_mut().enumerate() {
            // SAFETY: row first+i < m, column p < k: in the view.
            *d = unsafe { *row(i).add(p) };
        }
    }
    if rows < mr {
        for column in dst.chunks_exact_mut(mr) {
            column[rows..].fill(T::zero());
        }
    }
    conj_panel_rows(a.is_conj(), rows, mr, dst);
}

/// Packs a panel of fewer than 8 rows (`rows` of them, from row `first` of `a`, whose rows
/// are contiguous along k) into `dst` (ld `mr`, rows past `rows` zero): k step by k step, all
/// the rows side by side, so each source row is one of `rows` streams read at once. Row by
/// row, element by element, each row's k elements came from a cold page of its own, one row
/// after another: packing took 43 % of zgemm TN 4096×16×4096 (perf, session 46, MR = 4), and
/// in session 50 half of packing's third of zgemm NN 64×64×4096 went to haswell's complex B
/// panels (NR = 3) packed that way.
fn interleave_panel<T: Element>(
    a: &MatRef<T>,
    first: usize,
    rows: usize,
    mr: usize,
    dst: &mut [T],
) {
    match rows {
        1 => interleave_rows::<T, 1>(a, first, mr, dst),
        2 => interleave_rows::<T, 2>(a, first, mr, dst),
        3 => interleave_rows::<T, 3>(a, first, mr, dst),
        4 => interleave_rows::<T, 4>(a, first, mr, dst),
        5 => interleave_rows::<T, 5>(a, first, mr, dst),
        6 => interleave_rows::<T, 6>(a, first, mr, dst),
        7 => interleave_rows::<T, 7>(a, first, mr, dst),
        _ => unreachable!("interleave_panel takes panels of 1 to 7 rows, not {rows}"),
    }
}

/// [`interleave_panel`] for exactly R rows: the R rows' elements at each k step are written
/// next to each other, then the panel's `ld - R` padding rows' zeros.
fn interleave_rows<T: Element, const R: usize>(
    a: &MatRef<T>,
    first: usize,
    ld: usize,
    dst: &mut [T],
) {
    let k = a.ncols();
    assert!(first + R <= a.nrows() && a.col_stride() == 1 && ld >= R && dst.len() == ld * k);
    let rs = a.row_stride();
    // SAFETY: rows first..first + R are rows of the view (asserted), each k elements
    // contiguous (unit column stride).
    let rows: [&[T]; R] = std::array::from_fn(|i| unsafe {
        std::slice::from_raw_parts(a.as_ptr().wrapping_offset((first + i) as isize * rs), k)
    });
    for (p, out) in dst.chunks_exact_mut(ld).enumerate() {
        for (d, row) in out[..R].iter_mut().zip(&rows) {
            *d = row[p];
        }
        out[R..].fill(T::zero());
    }
}

/// Conjugates the first `rows` rows of a packed panel (ld `mr`) when `conj`.
fn conj_panel_rows<T: Element>(conj: bool, rows: usize, mr: usize, dst: &mut [T]) {
    if conj {
        for column in dst.chunks_exact_mut(mr) {
            for d in &mut column[..rows] {
                *d = d.conj();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::c32;

    fn numbered(m: usize, k: usize) -> Vec<f64> {
        (0..m * k).map(|x| x as f64 + 1.0).collect()
    }

    /// `buf` holds A's MR-row panels (k columns each, in order), rows past m zero.
    fn assert_packed_panels(buf: &[f64], a: &MatRef<f64>, mr: usize) {
        let k = a.ncols();
        for (panel, packed) in buf.chunks_exact(mr * k).enumerate() {
            for p in 0..k {
                for i in 0..mr {
                    let want = a.get(panel * mr + i, p).unwrap_or(0.0);
                    assert_eq!(packed[p * mr + i], want, "panel {panel} p {p} i {i}");
                }
            }
        }
    }

    #[test]
    fn packs_a_with_zero_padding_for_every_storage() {
        let (m, k, mr) = (5, 3, 4);
        let data = numbered(m, k);
        let col = MatRef::col_major(&data, m, k, m).unwrap();
        let row_data: Vec<f64> = (0..m * k).map(|x| data[(x % k) * m + x / k]).collect();
        let row = MatRef::row_major(&row_data, m, k, k).unwrap();
        for a in [col, row] {
            let mut buf = vec![f64::NAN; 2 * mr * k];
            pack_a_panels(&a, mr, 0..1, &mut buf[..mr * k], None);
            pack_a_panels(&a, mr, 1..2, &mut buf[mr * k..], None);
            assert_packed_panels(&buf, &a, mr);
        }
    }

    #[test]
    fn row_stored_panels_taller_than_a_block_pack_every_row() {
        // 12-row panels (NR of the AVX-512 kernels) go by two overlapping 8×8 blocks; an
        // 11-row panel likewise; k = 19 leaves a remainder of 3 columns (element by
        // element), k = 13 and 5 one of 5 and k = 4 one of 4 (the kernel's narrower block
        // where there is a kernel), k = 16 none.
        let (m, mr) = (23, 12);
        for k in [19, 13, 5, 4, 16] {
            let data = numbered(m, k);
            let a = MatRef::row_major(&data, m, k, k).unwrap();
            let mut transposes: Vec<Option<TransposeUkr<f64>>> = vec![None];
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx") {
                transposes.push(Some(crate::kernels::haswell::transpose_f64_8x8));
            }
            for transpose in transposes {
                let mut buf = vec![f64::NAN; 2 * mr * k];
                pack_a_panels(&a, mr, 0..2, &mut buf, transpose);
                assert_packed_panels(&buf, &a, mr);
            }
        }
    }

    /// Row-stored f32 panels of every height the kernels use and whole copies (the narrow
    /// path's: one panel of all the rows), at every k up to 20: the kernel's whole blocks,
    /// its narrower remainder blocks (4 to 7 columns) and the element loop must all agree
    /// with the definition, at a row stride past k.
    #[test]
    fn row_stored_f32_panels_pack_every_remainder() {
        let mut transposes: Vec<Option<TransposeUkr<f32>>> = vec![None];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            transposes.push(Some(crate::kernels::haswell::transpose_f32_8x8));
        }
        let m = 37;
        for k in 1..=20 {
            let ld = k + 3;
            let data: Vec<f32> = (0..m * ld).map(|x| x as f32 + 1.0).collect();
            let a = MatRef::row_major(&data, m, k, ld).unwrap();
            for mr in [6, 8, 16, 32, m] {
                let panels = m.div_ceil(mr);
                for &transpose in &transposes {
                    let mut buf = vec![f32::NAN; panels * mr * k];
                    pack_a_panels(&a, mr, 0..panels, &mut buf, transpose);
                    assert_packed_like(&buf, &a, mr);
                }
            }
        }
    }

    /// `buf` holds A's MR-row panels (k columns each, in order), rows past m zero: for any
    /// element type.
    fn assert_packed_like<T: Element + std::fmt::Debug>(buf: &[T], a: &MatRef<T>, mr: usize) {
        let k = a.ncols();
        for (panel, packed) in buf.chunks_exact(mr * k).enumerate() {
            for p in 0..k {
                for i in 0..mr {
                    let want = a.get(panel * mr + i, p).unwrap_or(T::zero());
                    assert_eq!(
                        packed[p * mr + i],
                        want,
                        "mr {mr} panel {panel} p {p} i {i}"
                    );
                }
            }
        }
    }

    /// Narrow panels from a row-stored source: 6-wide f32 ones go through a stack tile when
    /// whole and a packing kernel is given; the other panels under 8 rows (whole or partial,
    /// of any width up to 7) interleave their rows; 8 and more go by 8×8 blocks. k = 16 ends
    /// on a whole block, 19 leaves 3 columns, 5 has no whole block. The same widths from a
    /// column-stored source take the fixed-size column copies 8 columns at a time (12 and 16
    /// among them), with k's remainder of the 8.
    fn narrow_panels_of<T: Element + std::fmt::Debug + From<u16>>(
        transpose: Option<TransposeUkr<T>>,
    ) {
        for mr in [1_usize, 2, 3, 4, 5, 6, 7, 8, 12, 16] {
            for k in [5, 16, 19] {
                // Two whole panels and a partial one of 1 row, or of mr - 1 rows.
                for m in [2 * mr + 1, 3 * mr - 1] {
                    let panels = m.div_ceil(mr);
                    let data: Vec<T> = (0..m * k).map(|x| T::from(x as u16 + 1)).collect();
                    let row = MatRef::row_major(&data, m, k, k).unwrap();
                    let col = MatRef::col_major(&data, m, k, m).unwrap();
                    for a in [row, col] {
                        for t in [None, transpose] {
                            let mut buf = vec![T::from(u16::MAX); panels * mr * k];
                            pack_a_panels(&a, mr, 0..panels, &mut buf, t);
                            assert_packed_like(&buf, &a, mr);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn narrow_panels_pack_every_row_and_column() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx") {
            narrow_panels_of::<f32>(Some(crate::kernels::haswell::transpose_f32_8x8));
            narrow_panels_of::<f64>(Some(crate::kernels::haswell::transpose_f64_8x8));
            return;
        }
        narrow_panels_of::<f32>(None);
        narrow_panels_of::<f64>(None);
    }

    /// Complex panels under 8 rows from a row-stored source (haswell's zgemm A and complex
    /// B) interleave their rows, whole or partial, conjugated where the view is.
    #[test]
    fn narrow_complex_panels_interleave_and_conjugate() {
        use crate::types::c64;
        for mr in 1..8_usize {
            for k in [1, 5, 19] {
                for m in [2 * mr + 1, 3 * mr - 1] {
                    let panels = m.div_ceil(mr);
                    let data: Vec<c64> = (0..m * k)
                        .map(|x| c64::new(x as f64 + 1.0, -(x as f64) - 0.5))
                        .collect();
                    let row = MatRef::row_major(&data, m, k, k).unwrap();
                    for a in [row, row.conj()] {
                        let mut buf = vec![c64::new(f64::NAN, 7.0); panels * mr * k];
                        pack_a_panels(&a, mr, 0..panels, &mut buf, None);
                        assert_packed_like(&buf, &a, mr);
                    }
                }
            }
        }
    }

    #[test]
    fn packs_b_as_row_panels_and_conjugates() {
        let (k, n, nr) = (2, 3, 2);
        let data: Vec<c32> = (0..k * n).map(|x| c32::new(x as f32, 1.0)).collect();
        let b = MatRef::col_major(&data, k, n, k).unwrap().conj();
        let mut buf = vec![c32::new(9.0, 9.0); 2 * k * nr];
        pack_b_panels(&b, nr, 0..2, &mut buf, None);
        for panel in 0..2 {
            for p in 0..k {
                for j in 0..nr {
                    let want = b.get(p, panel * nr + j).unwrap_or(c32::new(0.0, 0.0));
                    assert_eq!(buf[panel * k * nr + p * nr + j], want);
                }
            }
        }
        assert_eq!(buf[0].im, -1.0);
    }
}

#[cfg(test)]
mod grouped_tests {
    use super::*;

    #[test]
    fn k_grouped_panels_interleave_and_pad() {
        // A is 3×5, MR = 2, g = 4: two panels (rows 0-1, row 2 + a zero row), k padded to 8.
        let data: Vec<f64> = (0..15).map(|x| x as f64 + 1.0).collect();
        let a = MatRef::col_major(&data, 3, 5, 3).unwrap();
        let mut dst = vec![f64::NAN; 2 * 2 * 8];
        pack_panels_k_grouped(&a, 2, 0..2, &mut dst, 4, 8);
        for panel in 0..2 {
            for p in 0..8 {
                for i in 0..2 {
                    let got = dst[panel * 16 + (p / 4) * 8 + i * 4 + p % 4];
                    let want = if p < 5 {
                        a.get(panel * 2 + i, p).unwrap_or(0.0)
                    } else {
                        0.0
                    };
                    assert_eq!(got, want, "panel {panel} p {p} i {i}");
                }
            }
        }
    }

    #[test]
    fn k_grouped_packing_agrees_for_every_layout_and_group() {
        // The vectorized paths (unit stride along k or m) against the definition, with a
        // partial last group, a partial last panel, and a general-stride source.
        let (m, k, mr) = (37, 150, 32);
        let data: Vec<i8> = (0..4 * m * k).map(|x| (x * 7 % 251) as i8).collect();
        let views = [
            MatRef::col_major(&data, m, k, m).unwrap(),
            MatRef::row_major(&data, m, k, k).unwrap(),
            MatRef::strided(&data, m, k, 2, 2 * m as isize).unwrap(),
        ];
        for a in &views {
            for g in [2, 4, 32, 64] {
                let kp = k.next_multiple_of(g);
                let panels = m.div_ceil(mr);
                let mut dst = vec![99i8; panels * mr * kp];
                pack_panels_k_grouped(a, mr, 0..panels, &mut dst, g, kp);
                for panel in 0..panels {
                    for p in 0..kp {
                        for i in 0..mr {
                            let got = dst[panel * mr * kp + (p / g) * mr * g + i * g + p % g];
                            let want = a.get(panel * mr + i, p).unwrap_or(0);
                            assert_eq!(got, want, "g {g} panel {panel} p {p} i {i}");
                        }
                    }
                }
            }
        }
    }
}
