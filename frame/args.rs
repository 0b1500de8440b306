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
        return Err(inner_mismatch((m, k), (kb, n)));
    }
    if c.nrows() != m || c.ncols() != n {
        return Err(outer_mismatch((c.nrows(), c.ncols()), (m, n)));
    }
    if !elements_are_distinct(c.nrows(), c.ncols(), c.row_stride(), c.col_stride()) {
        return Err(self_overlap(c));
    }
    // Disjoint byte spans cannot overlap (the footprints' first test, and the usual case):
    // the footprints are built only when a span meets C's, which saves a few percent of a
    // 32³ call.
    let c_span = c.as_ref().byte_span();
    let a_meets = spans_intersect(c_span, a.byte_span());
    let b_meets = spans_intersect(c_span, b.byte_span());
    if a_meets || b_meets {
        return check_footprints(a, a_meets, b, b_meets, c);
    }
    Ok(())
}

// The error paths are functions of their own, out of line: formatting inside `check_gemm`
// gave it a 300-byte frame and six saved registers on every call.

#[cold]
#[inline(never)]
fn inner_mismatch((m, k): (usize, usize), (kb, n): (usize, usize)) -> Error {
    Error::new(
        ErrorKind::ShapeMismatch,
        format!(
            "gemm: op(A) is {m}×{k} but op(B) is {kb}×{n}: \
             op(A)'s columns must equal op(B)'s rows"
        ),
    )
}

#[cold]
#[inline(never)]
fn outer_mismatch((cm, cn): (usize, usize), (m, n): (usize, usize)) -> Error {
    Error::new(
        ErrorKind::ShapeMismatch,
        format!("gemm: C is {cm}×{cn} but op(A)·op(B) is {m}×{n}"),
    )
}

#[cold]
#[inline(never)]
fn self_overlap<C: Scalar>(c: &MatMut<C>) -> Error {
    Error::new(
        ErrorKind::SelfOverlap,
        format!(
            "gemm: C's strides (rs = {}, cs = {}) make elements of its {}×{} shape share \
             memory; one stride must be at least the other times that dimension",
            c.row_stride(),
            c.col_stride(),
            c.nrows(),
            c.ncols()
        ),
    )
}

/// The exact alias test, for operands whose byte spans meet C's (`*_meets`).
#[cold]
#[inline(never)]
fn check_footprints<A: Element, B: Element, C: Scalar>(
    a: &MatRef<A>,
    a_meets: bool,
    b: &MatRef<B>,
    b_meets: bool,
    c: &MatMut<C>,
) -> Result<()> {
    let c_print = Footprint::of(c.as_ref());
    let suspects = [
        ("A", a_meets.then(|| Footprint::of(*a))),
        ("B", b_meets.then(|| Footprint::of(*b))),
    ];
    for (name, print) in suspects {
        if let Some(print) = print
            && Footprint::may_overlap(&c_print, &print)
        {
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

/// The bytes a view touches, described as `outer` runs of `width` bytes, `stride` bytes
/// apart, from `start` (strides made positive; the inner dimension is the one with the
/// smaller stride). Exact for views whose inner dimension is contiguous, which is every
/// column- or row-major view; otherwise the runs also cover the gaps between elements.
#[derive(Clone, Copy, Debug)]
struct Footprint {
    start: usize,
    width: usize,
    stride: usize,
    outer: usize,
}

impl Footprint {
    /// `None` for an empty view.
    fn of<T: Element>(v: MatRef<T>) -> Option<Footprint> {
        let (lo, _) = v.byte_span()?;
        let eb = size_of::<T>();
        // Views are extent-checked, so these products fit in isize.
        let dims = [
            (v.nrows(), v.row_stride().unsigned_abs() * eb),
            (v.ncols(), v.col_stride().unsigned_abs() * eb),
        ];
        // One dimension of length 1: the other is a single run if contiguous, else runs of
        // one element. Otherwise the smaller stride is the inner dimension.
        let (inner_len, inner_stride, outer, stride) = match dims {
            [(1, _), (len, s)] | [(len, s), (1, _)] if s == eb => (len, s, 1, 0),
            [(1, _), (len, s)] | [(len, s), (1, _)] => (1, eb, len, s),
            [r, c] => {
                let (i, o) = if r.1 <= c.1 { (r, c) } else { (c, r) };
                (i.0, i.1, o.0, o.1)
            }
        };
        Some(Footprint {
            start: lo,
            width: (inner_len - 1) * inner_stride + eb,
            stride: if outer == 1 { 0 } else { stride },
            outer,
        })
    }

    /// Whether two footprints (None = empty view) may share a byte. Exact when both are
    /// runs of the same stride no wider than it (sub-blocks of one column-major array, as
    /// LAPACK passes them: a panel and the trailing matrix it updates do not overlap);
    /// otherwise it falls back to the byte spans, which may say yes for disjoint views.
    fn may_overlap(x: &Option<Footprint>, y: &Option<Footprint>) -> bool {
        let (Some(x), Some(y)) = (x, y) else {
            return false;
        };
        let span = |f: &Footprint| (f.start, f.start + (f.outer - 1) * f.stride + f.width - 1);
        if !spans_intersect(Some(span(x)), Some(span(y))) {
            return false;
        }
        let stride = x.stride.max(y.stride);
        let same_lattice = (x.stride == stride || x.outer == 1)
            && (y.stride == stride || y.outer == 1)
            && x.width <= stride
            && y.width <= stride;
        if stride == 0 || !same_lattice {
            return true;
        }
        // Run j of x is [x.start + j·L, +x.width), run q of y is [y.start + q·L, +y.width).
        // They meet when -y.width < d + r·L < x.width, with d = y.start - x.start and
        // r = q - j in -(x.outer-1) ..= y.outer-1; the window is under 2L wide, so only r
        // near -d/L can qualify.
        let l = stride as i128;
        let d = y.start as i128 - x.start as i128;
        let r0 = (-d).div_euclid(l);
        (r0 - 1..=r0 + 2).any(|r| {
            let t = d + r * l;
            r >= -(x.outer as i128 - 1)
                && r < y.outer as i128
                && -(y.width as i128) < t
                && t < x.width as i128
        })
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

    /// Brute force: the byte sets of two views, intersected.
    fn overlap_by_enumeration(
        x: (usize, usize, usize, isize, isize),
        y: (usize, usize, usize, isize, isize),
    ) -> bool {
        let bytes = |(origin, m, n, rs, cs): (usize, usize, usize, isize, isize)| {
            let mut set = std::collections::HashSet::new();
            for i in 0..m {
                for j in 0..n {
                    let e = origin as isize + i as isize * rs + j as isize * cs;
                    for b in 0..8 {
                        set.insert(e * 8 + b);
                    }
                }
            }
            set
        };
        !bytes(x).is_disjoint(&bytes(y))
    }

    #[test]
    fn overlap_is_never_missed_and_exact_for_sub_blocks_of_one_array() {
        let buf = vec![0.0f64; 4096];
        let base = 2048usize;
        let view = |(origin, m, n, rs, cs): (usize, usize, usize, isize, isize)| {
            // SAFETY: every element lies inside `buf` (origin 2048 ± 5·10·2); only the
            // addresses are used.
            unsafe { MatRef::from_raw_parts(buf.as_ptr().add(origin), m, n, rs, cs).unwrap() }
        };
        let mut exact = 0;
        for (rs_x, cs_x, rs_y, cs_y) in [
            (1, 7, 1, 7),
            (7, 1, 7, 1),
            (1, 7, 7, 1),
            (1, 7, 1, 9),
            (2, 11, 2, 11),
            (-1, 7, 1, -7),
        ] {
            for off in 0..40usize {
                for (m, n) in [(1, 1), (3, 2), (2, 5), (7, 1), (1, 4), (5, 5)] {
                    for (my, ny) in [(1, 3), (4, 2), (6, 6)] {
                        let x = (base, m, n, rs_x, cs_x);
                        let y = (base + off, my, ny, rs_y, cs_y);
                        let truth = overlap_by_enumeration(x, y);
                        let said = Footprint::may_overlap(
                            &Footprint::of(view(x)),
                            &Footprint::of(view(y)),
                        );
                        assert!(said || !truth, "missed an overlap: {x:?} {y:?}");
                        let contiguous = |rs: isize, cs: isize| rs.abs() == 1 || cs.abs() == 1;
                        if rs_x == rs_y
                            && cs_x == cs_y
                            && contiguous(rs_x, cs_x)
                            && m <= 7
                            && my <= 7
                            && rs_x == 1
                        {
                            assert_eq!(said, truth, "not exact: {x:?} {y:?}");
                            exact += 1;
                        }
                    }
                }
            }
        }
        assert!(exact >= 700, "{exact} exact cases");
    }

    #[test]
    fn spans() {
        assert!(spans_intersect(Some((0, 10)), Some((10, 20))));
        assert!(!spans_intersect(Some((0, 9)), Some((10, 20))));
        assert!(!spans_intersect(None, Some((0, 20))));
    }
}
