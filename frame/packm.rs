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

use crate::types::Element;
use crate::view::MatRef;

/// Packs panels `panels` (of ⌈m/`mr`⌉) of the `m`×`k` view `a` into `dst`, which holds
/// exactly those panels: panel `p` goes to `dst[(p - panels.start)*mr*k ..][.. mr*k]`. Threads
/// of a team each pack their own range of panels of the same block.
///
/// Plainly, it is this loop (done as a copy when a panel's rows are contiguous, as 8×8
/// transposes when its columns are, and otherwise with the loop order that reads memory in
/// order):
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
) {
    let (m, k) = (a.nrows(), a.ncols());
    assert!(panels.end <= m.div_ceil(mr) && dst.len() == panels.len() * mr * k);
    if k == 0 {
        return;
    }
    for (panel, dst) in panels.zip(dst.chunks_exact_mut(mr * k)) {
        let first = panel * mr;
        pack_panel(a, first, mr.min(m - first), mr, dst);
    }
}

/// Packs panels `panels` (of ⌈n/`nr`⌉) of the `k`×`n` view `b`, each `nr` columns stored row
/// after row (`dst[(panel - panels.start)*k*nr + p*nr + j]`), zero-padded past `n`.
pub(crate) fn pack_b_panels<T: Element>(
    b: &MatRef<T>,
    nr: usize,
    panels: Range<usize>,
    dst: &mut [T],
) {
    pack_a_panels(&b.t(), nr, panels, dst)
}

/// Packs rows `first..first+rows` of `a` into one `mr`-row panel `dst` (`mr*k` elements).
fn pack_panel<T: Element>(a: &MatRef<T>, first: usize, rows: usize, mr: usize, dst: &mut [T]) {
    let k = a.ncols();
    let conj = a.is_conj();
    let read = |i: usize, p: usize| {
        // SAFETY: i < first + rows <= m and p < k: in range of the view.
        let v = unsafe { a.read_stored(first + i, p) };
        if conj { v.conj() } else { v }
    };
    if a.row_stride() == 1 {
        // Each packed column is `rows` consecutive elements of the source: a copy.
        for (p, column) in dst.chunks_exact_mut(mr).enumerate() {
            // SAFETY: rows first..first+rows of column p are in range and, with unit row
            // stride, contiguous.
            let src = unsafe {
                std::slice::from_raw_parts(
                    a.as_ptr().add(first).offset(p as isize * a.col_stride()),
                    rows,
                )
            };
            if conj {
                for (d, s) in column.iter_mut().zip(src) {
                    *d = s.conj();
                }
            } else {
                column[..rows].copy_from_slice(src);
            }
            column[rows..].fill(T::zero());
        }
    } else if a.col_stride() == 1 {
        // Each source row is contiguous along p: transpose in 8×8 blocks so both the reads
        // (8 consecutive p of one row) and the writes (8 consecutive i of one column) run
        // in order, which the compiler turns into vector loads, shuffles and stores.
        const B: usize = 8;
        let row = |i: usize| {
            a.as_ptr()
                .wrapping_offset((first + i) as isize * a.row_stride())
        };
        let full_p = k / B * B;
        for i0 in (0..rows).step_by(B) {
            let ib = B.min(rows - i0);
            for p0 in (0..full_p).step_by(B) {
                let mut block = [[T::zero(); B]; B];
                for (ii, line) in block.iter_mut().enumerate().take(ib) {
                    // SAFETY: row first+i0+ii < m, columns p0..p0+8 <= k, contiguous.
                    let src = unsafe { std::slice::from_raw_parts(row(i0 + ii).add(p0), B) };
                    line.copy_from_slice(src);
                }
                for pp in 0..B {
                    let out = &mut dst[(p0 + pp) * mr + i0..][..ib];
                    for (ii, d) in out.iter_mut().enumerate() {
                        let v = block[ii][pp];
                        *d = if conj { v.conj() } else { v };
                    }
                }
            }
            for p in full_p..k {
                for ii in 0..ib {
                    dst[p * mr + i0 + ii] = read(i0 + ii, p);
                }
            }
        }
        if rows < mr {
            for column in dst.chunks_exact_mut(mr) {
                column[rows..].fill(T::zero());
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::c32;

    fn numbered(m: usize, k: usize) -> Vec<f64> {
        (0..m * k).map(|x| x as f64 + 1.0).collect()
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
            pack_a_panels(&a, mr, 0..1, &mut buf[..mr * k]);
            pack_a_panels(&a, mr, 1..2, &mut buf[mr * k..]);
            for panel in 0..2 {
                for p in 0..k {
                    for i in 0..mr {
                        let got = buf[panel * mr * k + p * mr + i];
                        let want = a.get(panel * mr + i, p).unwrap_or(0.0);
                        assert_eq!(got, want, "panel {panel} p {p} i {i}");
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
        pack_b_panels(&b, nr, 0..2, &mut buf);
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
