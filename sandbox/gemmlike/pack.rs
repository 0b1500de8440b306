//! gemmlike's packing: copies a block of A into MR-tall panels and a block of B into
//! NR-wide panels, the layouts the microkernel contract asks for (`kernels/mod.rs`), applying
//! conjugation and zero-filling the last partial panel. Plain loops; the order of the two
//! inner loops follows the source's smaller stride, so reads run through memory in order.

use crate::types::Element;
use crate::view::MatRef;

/// `dst[q·MR·k + p·MR + i] = op(A)[q·MR + i, p]` for the m×k block `a`, zero past m.
pub(super) fn pack_a<T: Element>(a: &MatRef<T>, mr: usize, dst: &mut [T]) {
    let (m, k) = (a.nrows(), a.ncols());
    assert_eq!(dst.len(), m.div_ceil(mr) * mr * k);
    for (q, panel) in dst.chunks_exact_mut(mr * k).enumerate() {
        let first = q * mr;
        let rows = mr.min(m - first);
        copy_panel(a, first, rows, panel, mr);
    }
}

/// `dst[q·k·NR + p·NR + j] = op(B)[p, q·NR + j]` for the k×n block `b`, zero past n: B's
/// panels are Bᵀ's MR-tall panels with MR = NR.
pub(super) fn pack_b<T: Element>(b: &MatRef<T>, nr: usize, dst: &mut [T]) {
    pack_a(&b.t(), nr, dst);
}

/// Rows `first..first + rows` of `a` into one panel of height `height` (column-major,
/// leading dimension `height`), zero-filling rows `rows..height`.
fn copy_panel<T: Element>(
    a: &MatRef<T>,
    first: usize,
    rows: usize,
    panel: &mut [T],
    height: usize,
) {
    let k = a.ncols();
    let (rs, cs) = (a.row_stride(), a.col_stride());
    let conj = a.is_conj();
    let at = |i: usize, p: usize| {
        // SAFETY: i < rows (first + i < m) and p < k: inside the checked view.
        let v = unsafe {
            *a.as_ptr()
                .offset((first + i) as isize * rs + p as isize * cs)
        };
        if conj { v.conj() } else { v }
    };
    if rs.unsigned_abs() <= cs.unsigned_abs() {
        // Rows are closer together: walk down each column.
        for (p, column) in panel.chunks_exact_mut(height).enumerate() {
            for (i, d) in column[..rows].iter_mut().enumerate() {
                *d = at(i, p);
            }
        }
    } else {
        // Columns are closer together: walk along each row.
        for i in 0..rows {
            for p in 0..k {
                panel[p * height + i] = at(i, p);
            }
        }
    }
    if rows < height {
        for column in panel.chunks_exact_mut(height) {
            column[rows..].fill(T::zero());
        }
    }
}
