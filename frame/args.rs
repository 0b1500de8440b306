//! Argument checks for gemm, run before anything is read or written: shapes compose, C's
//! elements are distinct, and C shares no memory with A or B. (Extents and index overflow
//! were already checked when the views were built, in `frame/view.rs`.)

use crate::error::{Error, ErrorKind, Result};
use crate::types::{Element, Scalar};
use crate::view::{MatMut, MatRef};

/// Checks `c := op(a)·op(b)`'s operands; on `Err`, nothing has been touched.
pub(crate) fn check_gemm<A: Element, B: Element, C: Scalar>(
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &MatMut<C>,
) -> Result<()> {
    let (m, k, kb, n) = (a.nrows(), a.ncols(), b.nrows(), b.ncols());
    if k != kb {
        return Err(Error::new(
            ErrorKind::ShapeMismatch,
            format!(
                "gemm: op(A) is {m}×{k} but op(B) is {kb}×{n}: \
                 op(A)'s columns must equal op(B)'s rows"
            ),
        ));
    }
    if c.nrows() != m || c.ncols() != n {
        return Err(Error::new(
            ErrorKind::ShapeMismatch,
            format!(
                "gemm: C is {}×{} but op(A)·op(B) is {m}×{n}",
                c.nrows(),
                c.ncols()
            ),
        ));
    }
    if !elements_are_distinct(c.nrows(), c.ncols(), c.row_stride(), c.col_stride()) {
        return Err(Error::new(
            ErrorKind::SelfOverlap,
            format!(
                "gemm: C's strides (rs = {}, cs = {}) make elements of its {}×{} shape share \
                 memory; one stride must be at least the other times that dimension",
                c.row_stride(),
                c.col_stride(),
                c.nrows(),
                c.ncols()
            ),
        ));
    }
    for (name, span) in [("A", a.byte_span()), ("B", b.byte_span())] {
        if spans_intersect(c.byte_span(), span) {
            return Err(Error::new(
                ErrorKind::Alias,
                format!("gemm: C shares memory with {name}; the output must not alias an input"),
            ));
        }
    }
    Ok(())
}

/// Whether the offsets `i*rs + j*cs` (`i < m`, `j < n`) are all different, by the usual
/// sufficient rule: one dimension's stride steps over the whole extent of the other.
/// (Rarer injective layouts that interleave, such as rs = 2, cs = 3 for 2×2, are refused.)
fn elements_are_distinct(m: usize, n: usize, rs: isize, cs: isize) -> bool {
    let (rs, cs) = (rs.unsigned_abs(), cs.unsigned_abs());
    match (m > 1, n > 1) {
        (false, false) => true,
        (true, false) => rs != 0,
        (false, true) => cs != 0,
        // Views are extent-checked, so these products cannot overflow.
        (true, true) => (rs != 0 && cs >= m * rs) || (cs != 0 && rs >= n * cs),
    }
}

/// Whether two inclusive byte ranges (None = empty) share a byte.
fn spans_intersect(x: Option<(usize, usize)>, y: Option<(usize, usize)>) -> bool {
    match (x, y) {
        (Some((x0, x1)), Some((y0, y1))) => x0 <= y1 && y0 <= x1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: do any two in-range elements share an offset?
    fn distinct_by_enumeration(m: usize, n: usize, rs: isize, cs: isize) -> bool {
        let mut seen = std::collections::HashSet::new();
        (0..m).all(|i| (0..n).all(|j| seen.insert(i as isize * rs + j as isize * cs)))
    }

    #[test]
    fn accepted_layouts_really_are_distinct() {
        for m in 0..5 {
            for n in 0..5 {
                for rs in -6..=6 {
                    for cs in -6..=6 {
                        if elements_are_distinct(m, n, rs, cs) {
                            assert!(distinct_by_enumeration(m, n, rs, cs), "{m}x{n} {rs} {cs}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ordinary_layouts_are_accepted() {
        assert!(elements_are_distinct(3, 4, 1, 3));
        assert!(elements_are_distinct(3, 4, 4, 1));
        assert!(elements_are_distinct(3, 4, -1, 5));
        assert!(elements_are_distinct(1, 4, 0, 1));
        assert!(!elements_are_distinct(3, 4, 1, 2));
        assert!(!elements_are_distinct(3, 4, 0, 1));
    }

    #[test]
    fn spans() {
        assert!(spans_intersect(Some((0, 10)), Some((10, 20))));
        assert!(!spans_intersect(Some((0, 9)), Some((10, 20))));
        assert!(!spans_intersect(None, Some((0, 20))));
    }
}
