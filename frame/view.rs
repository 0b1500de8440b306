//! Strided matrix views: pointer, m, n, row stride, column stride.
//!
//! [`MatRef`] is a read-only operand (A or B). It also carries op() and a scalar, so a call
//! needs no separate transpose flags or alpha: `a.t()` transposes, `a.conj()` conjugates,
//! `a.h()` does both, `a.scaled(s)` multiplies the scalar it carries (alpha is the product of
//! A's and B's). None of them copies anything.
//!
//! [`MatMut`] is the output C. It carries beta (0 by default: C is overwritten, never read).
//!
//! Element `(i, j)` lives at `ptr + i*rs + j*cs` (elements, not bytes). Strides may be
//! negative or any size; column-major is `rs = 1, cs = ld`, row-major `rs = ld, cs = 1`.
//! Safe constructors take a slice and check that every element lies inside it, with overflow-
//! checked arithmetic; `from_raw_parts` does the same arithmetic checks and leaves pointer
//! validity to the caller.

use std::marker::PhantomData;

use crate::error::{Error, ErrorKind, Result};
use crate::types::{Element, Scalar};

/// The memory a view touches, as element offsets from its (0,0) element, both inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Extent {
    lo: isize,
    hi: isize,
}

/// Offsets spanned by an `m`×`n` view with strides `rs`, `cs`; `None` for an empty view.
/// Fails when the offsets, or the span in bytes, do not fit in `isize`.
///
/// Inlined, with the overflow-checked arithmetic out of line: every gemm call goes through
/// this six times (three view constructors, three footprints in `check_gemm`), and at 32³ the
/// exact version alone was about 20 % of a call's time outside the kernel.
#[inline]
fn extent(
    who: &str,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
    elem_bytes: usize,
) -> Result<Option<Extent>> {
    if m == 0 || n == 0 {
        return Ok(None);
    }
    // Fast path: with every factor below 2^28 and an element of at most 32 bytes, each span
    // is below 2^56, the view covers at most 2^57 elements and 2^62 bytes, so the unchecked
    // arithmetic below cannot overflow and the checked version would accept.
    const SMALL: usize = 1 << 28;
    if m < SMALL
        && n < SMALL
        && rs.unsigned_abs() < SMALL
        && cs.unsigned_abs() < SMALL
        && elem_bytes <= 32
    {
        let row_span = (m - 1) as isize * rs;
        let col_span = (n - 1) as isize * cs;
        return Ok(Some(Extent {
            lo: row_span.min(0) + col_span.min(0),
            hi: row_span.max(0) + col_span.max(0),
        }));
    }
    extent_checked(who, m, n, rs, cs, elem_bytes)
}

/// [`extent`] with every step checked, for nonempty views of any size.
#[cold]
#[inline(never)]
fn extent_checked(
    who: &str,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
    elem_bytes: usize,
) -> Result<Option<Extent>> {
    let overflow = || {
        Error::new(
            ErrorKind::InvalidView,
            format!(
                "{who}: a {m}×{n} view with rs = {rs}, cs = {cs} has offsets that overflow isize"
            ),
        )
    };
    let span =
        |d: usize, s: isize| -> Option<isize> { isize::try_from(d - 1).ok()?.checked_mul(s) };
    let row_span = span(m, rs).ok_or_else(overflow)?;
    let col_span = span(n, cs).ok_or_else(overflow)?;
    let lo = row_span
        .min(0)
        .checked_add(col_span.min(0))
        .ok_or_else(overflow)?;
    let hi = row_span
        .max(0)
        .checked_add(col_span.max(0))
        .ok_or_else(overflow)?;
    let elems = hi
        .checked_sub(lo)
        .and_then(|d| d.checked_add(1))
        .ok_or_else(overflow)?;
    elems
        .checked_mul(isize::try_from(elem_bytes).map_err(|_| overflow())?)
        .ok_or_else(overflow)?;
    Ok(Some(Extent { lo, hi }))
}

/// Whether a column-major `rows`×`cols` array with leading dimension `ld` spans at most
/// `isize::MAX` bytes, as any array in memory does: what [`MatRef::from_blas_array`] needs
/// in place of `extent`'s checks. BLAS dimensions are `c_int`s, so only sizes no real array
/// has can fail it.
#[inline]
pub(crate) fn blas_array_fits<T>(rows: usize, cols: usize, ld: usize) -> bool {
    let elements = cols.saturating_sub(1).checked_mul(ld);
    let bytes = elements.and_then(|e| e.checked_add(rows)?.checked_mul(size_of::<T>()));
    bytes.is_some_and(|b| b <= isize::MAX as usize)
}

/// Checks that a view of a slice of `len` elements fits, and returns the offset of its
/// (0,0) element: the lowest address the view touches is the slice's first element.
#[inline]
fn origin_in_slice(
    who: &str,
    len: usize,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
    elem_bytes: usize,
) -> Result<usize> {
    let Some(Extent { lo, hi }) = extent(who, m, n, rs, cs, elem_bytes)? else {
        return Ok(0);
    };
    // `hi - lo` cannot overflow: `extent` checked it.
    let needed = (hi - lo) as usize + 1;
    if needed > len {
        return Err(too_short(who, len, m, n, rs, cs, needed));
    }
    Ok((-lo) as usize)
}

#[cold]
#[inline(never)]
fn too_short(
    who: &str,
    len: usize,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
    needed: usize,
) -> Error {
    Error::new(
        ErrorKind::InvalidView,
        format!(
            "{who}: a {m}×{n} view with rs = {rs}, cs = {cs} spans {needed} elements \
             but the slice has {len}"
        ),
    )
}

#[inline]
fn check_ld(who: &str, ld: usize, inner: usize, inner_name: &str) -> Result<isize> {
    if ld < inner.max(1) || ld > isize::MAX as usize {
        return Err(bad_ld(who, ld, inner, inner_name));
    }
    Ok(ld as isize)
}

#[cold]
#[inline(never)]
fn bad_ld(who: &str, ld: usize, inner: usize, inner_name: &str) -> Error {
    if ld < inner.max(1) {
        Error::new(
            ErrorKind::InvalidView,
            format!(
                "{who}: ld = {ld} must be at least max(1, {inner_name}) = {}",
                inner.max(1)
            ),
        )
    } else {
        Error::new(
            ErrorKind::InvalidView,
            format!("{who}: ld = {ld} overflows isize"),
        )
    }
}

/// A read-only strided view of an operand, with its op() and scalar. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, T: Element> {
    ptr: *const T,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
    conj: bool,
    scale: T::Acc,
    _borrow: PhantomData<&'a [T]>,
}

// SAFETY: a MatRef is a shared borrow of `T`s (like `&[T]`), and `Element: Sync`.
unsafe impl<T: Element> Send for MatRef<'_, T> {}
// SAFETY: as above; it offers only reads.
unsafe impl<T: Element> Sync for MatRef<'_, T> {}

impl<'a, T: Element> MatRef<'a, T> {
    /// A column-major `m`×`n` view: element (i, j) at `data[i + j*ld]`, `ld >= max(1, m)`.
    #[inline]
    pub fn col_major(data: &'a [T], m: usize, n: usize, ld: usize) -> Result<Self> {
        let ld = check_ld("MatRef::col_major", ld, m, "m")?;
        Self::strided_named("MatRef::col_major", data, m, n, 1, ld)
    }

    /// A row-major `m`×`n` view: element (i, j) at `data[i*ld + j]`, `ld >= max(1, n)`.
    #[inline]
    pub fn row_major(data: &'a [T], m: usize, n: usize, ld: usize) -> Result<Self> {
        let ld = check_ld("MatRef::row_major", ld, n, "n")?;
        Self::strided_named("MatRef::row_major", data, m, n, ld, 1)
    }

    /// A general-stride view. Negative strides are allowed: the element with the lowest
    /// address is `data[0]`.
    #[inline]
    pub fn strided(data: &'a [T], m: usize, n: usize, rs: isize, cs: isize) -> Result<Self> {
        Self::strided_named("MatRef::strided", data, m, n, rs, cs)
    }

    #[inline]
    fn strided_named(
        who: &str,
        data: &'a [T],
        m: usize,
        n: usize,
        rs: isize,
        cs: isize,
    ) -> Result<Self> {
        let origin = origin_in_slice(who, data.len(), m, n, rs, cs, size_of::<T>())?;
        // `origin` is within the slice (or 0 for an empty view): checked above.
        let ptr = data.as_ptr().wrapping_add(origin);
        Ok(Self::new_unchecked(ptr, m, n, rs, cs))
    }

    /// A view over raw memory. The shape and strides are checked for overflow (an `Err`
    /// names the problem); nothing else can be.
    ///
    /// # Safety
    /// For the lifetime `'a`, every element `ptr + i*rs + j*cs` (`i < m`, `j < n`) must be
    /// valid for reads and not written through any other pointer. If `m` or `n` is 0 the
    /// pointer is never read.
    pub unsafe fn from_raw_parts(
        ptr: *const T,
        m: usize,
        n: usize,
        rs: isize,
        cs: isize,
    ) -> Result<Self> {
        extent("MatRef::from_raw_parts", m, n, rs, cs, size_of::<T>())?;
        Ok(Self::new_unchecked(ptr, m, n, rs, cs))
    }

    /// A view of a column-major BLAS array, `rows`×`cols` with leading dimension `ld`,
    /// without [`MatRef::from_raw_parts`]'s overflow checks: the caller has checked
    /// [`blas_array_fits`].
    ///
    /// # Safety
    /// As for [`MatRef::from_raw_parts`] with rs = 1 and cs = `ld`, and
    /// `blas_array_fits::<T>(rows, cols, ld)`.
    #[inline]
    pub(crate) unsafe fn from_blas_array(
        ptr: *const T,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Self {
        Self::new_unchecked(ptr, rows, cols, 1, ld as isize)
    }

    #[inline]
    fn new_unchecked(ptr: *const T, m: usize, n: usize, rs: isize, cs: isize) -> Self {
        MatRef {
            ptr,
            m,
            n,
            rs,
            cs,
            conj: false,
            scale: <T::Acc as Scalar>::one(),
            _borrow: PhantomData,
        }
    }

    /// The transpose, without copying.
    pub fn t(self) -> Self {
        MatRef {
            m: self.n,
            n: self.m,
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }

    /// The complex conjugate (toggles; a no-op for real types), without copying.
    pub fn conj(self) -> Self {
        MatRef {
            // Real types never carry the flag, so no path copies or conjugates for it (a real
            // `?gemm` called with 'C' is the 'T' call).
            conj: T::Acc::IS_COMPLEX && !self.conj,
            ..self
        }
    }

    /// The conjugate transpose, without copying.
    pub fn h(self) -> Self {
        self.t().conj()
    }

    /// Multiplies the scalar this view carries by `s`. In gemm, alpha is the product of the
    /// scalars of A and B.
    pub fn scaled(self, s: T::Acc) -> Self {
        MatRef {
            scale: self.scale * s,
            ..self
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.m
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.n
    }
    /// Distance in elements between (i, j) and (i+1, j).
    pub fn row_stride(&self) -> isize {
        self.rs
    }
    /// Distance in elements between (i, j) and (i, j+1).
    pub fn col_stride(&self) -> isize {
        self.cs
    }
    /// Whether elements are conjugated when read.
    pub fn is_conj(&self) -> bool {
        self.conj
    }
    /// The scalar this view carries (1 unless [`MatRef::scaled`] was used).
    pub fn scale(&self) -> T::Acc {
        self.scale
    }
    /// Pointer to element (0, 0).
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// The value at (i, j) with the view's conjugation applied (its scalar is not applied),
    /// or `None` out of range.
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        if i >= self.m || j >= self.n {
            return None;
        }
        // SAFETY: (i, j) is in range, and every in-range element was checked (or promised,
        // for `from_raw_parts`) to be readable for 'a.
        let v = unsafe { self.read_stored(i, j) };
        Some(if self.conj { v.conj() } else { v })
    }

    /// The stored value at (i, j), without conjugation.
    ///
    /// # Safety
    /// `i < nrows()` and `j < ncols()`.
    #[inline]
    pub(crate) unsafe fn read_stored(&self, i: usize, j: usize) -> T {
        // SAFETY: the caller keeps (i, j) in range; in-range offsets fit isize (checked at
        // construction) and point at readable elements.
        unsafe { *self.ptr.offset(i as isize * self.rs + j as isize * self.cs) }
    }

    /// The `m`×`n` sub-view starting at (i0, j0), with the same op() and scalar.
    /// Panics (a bug in the caller, caught at the API boundary) if it does not fit.
    pub(crate) fn submatrix(&self, i0: usize, j0: usize, m: usize, n: usize) -> Self {
        assert!(
            i0 + m <= self.m && j0 + n <= self.n,
            "submatrix out of range"
        );
        let offset = i0 as isize * self.rs + j0 as isize * self.cs;
        MatRef {
            ptr: self.ptr.wrapping_offset(offset),
            m,
            n,
            ..*self
        }
    }

    /// The byte addresses the view touches, both inclusive; `None` if empty.
    #[inline]
    pub(crate) fn byte_span(&self) -> Option<(usize, usize)> {
        let (m, n, rs, cs) = (self.m, self.n, self.rs, self.cs);
        if m == 0 || n == 0 {
            return None;
        }
        // Every view passed `extent` when it was built (sub-views and transposes only shrink
        // or reorder it), so none of this overflows isize; `extent`'s own range guards would
        // be a third of `check_gemm`'s work on a small call (three views per call).
        let row_span = ((m - 1) as isize).wrapping_mul(rs);
        let col_span = ((n - 1) as isize).wrapping_mul(cs);
        let lo = row_span.min(0).wrapping_add(col_span.min(0));
        let hi = row_span.max(0).wrapping_add(col_span.max(0));
        let (addr, eb) = (self.ptr as usize, size_of::<T>() as isize);
        Some((
            addr.wrapping_add_signed(lo.wrapping_mul(eb)),
            addr.wrapping_add_signed(hi.wrapping_mul(eb).wrapping_add(eb - 1)),
        ))
    }
}

/// A mutable strided view of the output C, carrying beta. See the module docs.
#[derive(Debug)]
pub struct MatMut<'a, T: Scalar> {
    ptr: *mut T,
    m: usize,
    n: usize,
    rs: isize,
    cs: isize,
    beta: T,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a MatMut is an exclusive borrow of `T`s (like `&mut [T]`), and `Scalar: Send`.
unsafe impl<T: Scalar> Send for MatMut<'_, T> {}
// SAFETY: shared access to a MatMut only reads (`get`, `as_ref`), and `Scalar: Sync`.
unsafe impl<T: Scalar> Sync for MatMut<'_, T> {}

impl<'a, T: Scalar> MatMut<'a, T> {
    /// A column-major `m`×`n` view: element (i, j) at `data[i + j*ld]`, `ld >= max(1, m)`.
    #[inline]
    pub fn col_major(data: &'a mut [T], m: usize, n: usize, ld: usize) -> Result<Self> {
        let ld = check_ld("MatMut::col_major", ld, m, "m")?;
        Self::strided_named("MatMut::col_major", data, m, n, 1, ld)
    }

    /// A row-major `m`×`n` view: element (i, j) at `data[i*ld + j]`, `ld >= max(1, n)`.
    #[inline]
    pub fn row_major(data: &'a mut [T], m: usize, n: usize, ld: usize) -> Result<Self> {
        let ld = check_ld("MatMut::row_major", ld, n, "n")?;
        Self::strided_named("MatMut::row_major", data, m, n, ld, 1)
    }

    /// A general-stride view; see [`MatRef::strided`]. Strides that make elements overlap
    /// are accepted here and refused by gemm, which would write them.
    #[inline]
    pub fn strided(data: &'a mut [T], m: usize, n: usize, rs: isize, cs: isize) -> Result<Self> {
        Self::strided_named("MatMut::strided", data, m, n, rs, cs)
    }

    #[inline]
    fn strided_named(
        who: &str,
        data: &'a mut [T],
        m: usize,
        n: usize,
        rs: isize,
        cs: isize,
    ) -> Result<Self> {
        let origin = origin_in_slice(who, data.len(), m, n, rs, cs, size_of::<T>())?;
        let ptr = data.as_mut_ptr().wrapping_add(origin);
        Ok(Self::new_unchecked(ptr, m, n, rs, cs))
    }

    /// A view over raw memory; see [`MatRef::from_raw_parts`].
    ///
    /// # Safety
    /// For the lifetime `'a`, every element `ptr + i*rs + j*cs` (`i < m`, `j < n`) must be
    /// valid for reads and writes and not accessed through any other pointer.
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        m: usize,
        n: usize,
        rs: isize,
        cs: isize,
    ) -> Result<Self> {
        extent("MatMut::from_raw_parts", m, n, rs, cs, size_of::<T>())?;
        Ok(Self::new_unchecked(ptr, m, n, rs, cs))
    }

    /// A view of a column-major BLAS array; see [`MatRef::from_blas_array`].
    ///
    /// # Safety
    /// As for [`MatMut::from_raw_parts`] with rs = 1 and cs = `ld`, and
    /// `blas_array_fits::<T>(rows, cols, ld)`.
    #[inline]
    pub(crate) unsafe fn from_blas_array(ptr: *mut T, rows: usize, cols: usize, ld: usize) -> Self {
        Self::new_unchecked(ptr, rows, cols, 1, ld as isize)
    }

    #[inline]
    fn new_unchecked(ptr: *mut T, m: usize, n: usize, rs: isize, cs: isize) -> Self {
        MatMut {
            ptr,
            m,
            n,
            rs,
            cs,
            beta: T::zero(),
            _borrow: PhantomData,
        }
    }

    /// Sets beta: gemm computes C := alpha·op(A)·op(B) + beta·C. The default, 0, overwrites
    /// C without reading it.
    pub fn with_beta(self, beta: T) -> Self {
        MatMut { beta, ..self }
    }

    /// The transpose, without copying.
    pub fn t(self) -> Self {
        MatMut {
            m: self.n,
            n: self.m,
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }

    /// A shorter-lived view of the same elements, with the same beta.
    pub fn rb(&mut self) -> MatMut<'_, T> {
        MatMut {
            ptr: self.ptr,
            _borrow: PhantomData,
            ..*self
        }
    }

    /// A read-only view of the same elements.
    pub fn as_ref(&self) -> MatRef<'_, T> {
        MatRef::new_unchecked(self.ptr, self.m, self.n, self.rs, self.cs)
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.m
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.n
    }
    /// Distance in elements between (i, j) and (i+1, j).
    pub fn row_stride(&self) -> isize {
        self.rs
    }
    /// Distance in elements between (i, j) and (i, j+1).
    pub fn col_stride(&self) -> isize {
        self.cs
    }
    /// The beta this view carries.
    pub fn beta(&self) -> T {
        self.beta
    }
    /// Pointer to element (0, 0).
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// The value at (i, j), or `None` out of range.
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        self.as_ref().get(i, j)
    }

    /// Pointer to element (i, j) (not dereferenced here).
    pub(crate) fn ptr_at(&self, i: usize, j: usize) -> *mut T {
        self.ptr
            .wrapping_offset(i as isize * self.rs + j as isize * self.cs)
    }

    /// A view of one thread's block of a raw matrix (`frame/l3/raw.rs`), beta 0.
    ///
    /// # Safety
    /// For `'a`, the block's elements must be valid for reads and writes and not accessed
    /// through any other pointer (each thread its own block of an exclusively borrowed C).
    pub(crate) unsafe fn from_raw(raw: crate::l3::raw::RawMat<T>) -> MatMut<'a, T> {
        Self::new_unchecked(raw.ptr, raw.m, raw.n, raw.rs, raw.cs)
    }

    /// The view as a raw matrix for the threads of the loop nest (`frame/l3/raw.rs`).
    pub(crate) fn raw(&mut self) -> crate::l3::raw::RawMat<T> {
        crate::l3::raw::RawMat {
            ptr: self.ptr,
            m: self.m,
            n: self.n,
            rs: self.rs,
            cs: self.cs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn col_major_checks_ld_and_length() {
        let data = [0.0f64; 12];
        assert!(MatRef::col_major(&data, 3, 4, 3).is_ok());
        let e = MatRef::col_major(&data, 3, 4, 2).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidView);
        assert!(e.message().contains("ld = 2"), "{e}");
        let e = MatRef::col_major(&data, 4, 4, 4).unwrap_err();
        assert!(
            e.message()
                .contains("spans 16 elements but the slice has 12"),
            "{e}"
        );
        // The last column need not be padded to ld.
        assert!(MatRef::col_major(&data[..11], 3, 4, 3).is_err());
        assert!(MatRef::col_major(&data[..11], 2, 4, 3).is_ok());
        assert!(MatRef::col_major(&data[..10], 2, 4, 3).is_err());
    }

    #[test]
    fn empty_views_need_no_memory() {
        let data: [f32; 0] = [];
        assert!(MatRef::col_major(&data, 0, 5, 1).is_ok());
        assert!(MatRef::strided(&data, 7, 0, 1000, -3).is_ok());
    }

    #[test]
    fn negative_strides_start_at_the_lowest_address() {
        let data: Vec<f64> = (0..6).map(f64::from).collect();
        // 2×3, rows reversed: (0,0) is data[1], (1,0) is data[0].
        let v = MatRef::strided(&data, 2, 3, -1, 2).unwrap();
        assert_eq!(v.get(0, 0), Some(1.0));
        assert_eq!(v.get(1, 0), Some(0.0));
        assert_eq!(v.get(1, 2), Some(4.0));
        assert_eq!(v.t().get(2, 1), Some(4.0));
    }

    #[test]
    fn overflowing_strides_are_refused() {
        let p = std::ptr::NonNull::<f64>::dangling().as_ptr();
        // SAFETY: both calls fail their checks, so nothing is ever read.
        let e = unsafe { MatRef::from_raw_parts(p, 3, 2, isize::MAX / 2, 1) }.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidView);
        assert!(e.message().contains("overflow"), "{e}");
        // In elements it fits isize, in bytes it does not.
        // SAFETY: as above.
        let e = unsafe { MatMut::from_raw_parts(p, isize::MAX as usize / 4, 1, 1, 1) };
        assert!(e.is_err());
    }

    #[test]
    fn conj_and_h_apply_on_read() {
        use crate::types::c64;
        let data = [c64::new(1.0, 2.0), c64::new(3.0, 4.0)];
        let v = MatRef::col_major(&data, 2, 1, 2).unwrap();
        assert_eq!(v.h().get(0, 1), Some(c64::new(3.0, -4.0)));
        assert_eq!(v.h().h().get(1, 0), Some(c64::new(3.0, 4.0)));
        assert_eq!(v.scaled(c64::new(2.0, 0.0)).scale(), c64::new(2.0, 0.0));
        assert!(v.conj().is_conj() && !v.conj().conj().is_conj());
    }

    /// Conjugating a real view changes nothing, not even the flag the paths test to copy or
    /// conjugate.
    #[test]
    fn real_views_never_carry_conjugation() {
        let data = [1.0f64, 2.0];
        let v = MatRef::col_major(&data, 2, 1, 2).unwrap();
        assert!(!v.conj().is_conj() && !v.h().is_conj() && !v.h().h().is_conj());
        assert_eq!(v.h().get(0, 1), Some(2.0));
        let bytes = [1i8, 2];
        assert!(!MatRef::col_major(&bytes, 2, 1, 2).unwrap().conj().is_conj());
    }
}
