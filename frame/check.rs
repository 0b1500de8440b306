//! The test oracle, shared by the crate's tests, the integration tests and the `testsuite`
//! binary: a reproducible random generator, a plainly written reference gemm with the exact
//! BLAS semantics, and the error bound results are judged by. Nothing in the compute path
//! uses this module.

use crate::types::{Element, Scalar};
use crate::view::{MatMut, MatRef};

/// SplitMix64: small, fast, reproducible from a seed; statistical quality is ample for tests.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// A random value of the given class.
    pub fn value<T: Element>(&mut self, values: Values) -> T {
        let mut part = || match values {
            Values::SmallIntegers => self.below(9) as f64 - 4.0,
            Values::Uniform => self.uniform(),
        };
        let re = part();
        let im = if <T::Acc as Scalar>::IS_COMPLEX {
            part()
        } else {
            0.0
        };
        T::from_parts(re, im)
    }

    /// Fills a buffer with random values of the given class.
    pub fn fill<T: Element>(&mut self, values: Values, buf: &mut [T]) {
        for x in buf {
            *x = self.value(values);
        }
    }
}

/// Classes of random test data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Values {
    /// Integers in [-4, 4] (both parts for complex). Sums of their products stay exact in
    /// floating point for any k a test uses (below 2^24 / 32 in f32), so results can be
    /// compared for equality, whatever the summation order.
    SmallIntegers,
    /// Uniform in [-1, 1): results are compared within [`tolerance`].
    Uniform,
}

/// Reference gemm, written as plainly as possible: C := alpha·op(A)·op(B) + beta·C with the
/// views' op(), scalars and beta, BLAS semantics (beta = 0: C not read; alpha = 0 or k = 0:
/// A and B not read). Also returns, per element of C in column-major order, the magnitude
/// `|alpha|·Σ|a_ip||b_pj| + |beta|·|c_ij|` that rounding errors are proportional to. A and
/// B may be of a narrower type than C (bf16 → f32): their elements are widened exactly.
pub fn gemm_reference<A, B, T>(a: &MatRef<A>, b: &MatRef<B>, c: &mut MatMut<T>) -> Vec<f64>
where
    A: Element<Acc = T>,
    B: Element<Acc = T>,
    T: Scalar,
{
    let alpha = a.scale() * b.scale();
    let beta = c.beta();
    let (m, n, k) = (c.nrows(), c.ncols(), a.ncols());
    let mut magnitude = Vec::with_capacity(m * n);
    for j in 0..n {
        for i in 0..m {
            let mut sum = T::zero();
            let mut abs_sum = 0.0;
            if !alpha.is_zero() {
                for p in 0..k {
                    let (x, y) = (a.get(i, p).unwrap().to_acc(), b.get(p, j).unwrap().to_acc());
                    sum = sum + x * y;
                    abs_sum += x.abs1() * y.abs1();
                }
            }
            let old = if beta.is_zero() {
                T::zero()
            } else {
                c.get(i, j).unwrap()
            };
            let new = if beta.is_zero() {
                alpha * sum
            } else {
                alpha * sum + beta * old
            };
            magnitude.push(alpha.abs1() * abs_sum + beta.abs1() * old.abs1());
            let p = c.ptr_at(i, j);
            // SAFETY: (i, j) is in range of the exclusively borrowed view.
            unsafe { *p = new };
        }
    }
    magnitude
}

/// The largest acceptable `|computed - reference|` (in `abs1`) for an element whose
/// magnitude (see [`gemm_reference`]) is `magnitude`, for depth `k`: both results carry at
/// most about `(k + 2)·u·magnitude` rounding error (a complex product a few `u` more), so
/// twice that, with slack for complex arithmetic, bounds their difference. A wrong element
/// (a missed or doubled term) is off by a whole term, far beyond it.
pub fn tolerance<T: Scalar>(k: usize, magnitude: f64) -> f64 {
    let slack = if T::IS_COMPLEX { 4.0 } else { 2.0 };
    slack * (k as f64 + 2.0) * T::UNIT_ROUNDOFF * magnitude
}

/// op() applied to a stored operand, with its BLAS letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As stored (`n`).
    N,
    /// Transposed (`t`).
    T,
    /// Conjugate-transposed (`c`).
    C,
    /// Conjugated, not transposed (`r`, as BLIS calls it).
    R,
}

impl Op {
    /// Every op().
    pub const ALL: [Op; 4] = [Op::N, Op::T, Op::C, Op::R];

    /// Applies this op() to a view, without copying.
    pub fn apply<T: Element>(self, v: MatRef<'_, T>) -> MatRef<'_, T> {
        match self {
            Op::N => v,
            Op::T => v.t(),
            Op::C => v.h(),
            Op::R => v.conj(),
        }
    }

    /// The stored shape of an operand whose op() is `rows`×`cols`.
    pub fn stored_shape(self, rows: usize, cols: usize) -> (usize, usize) {
        match self {
            Op::N | Op::R => (rows, cols),
            Op::T | Op::C => (cols, rows),
        }
    }

    /// BLIS's letter for it.
    pub fn letter(self) -> char {
        match self {
            Op::N => 'n',
            Op::T => 't',
            Op::C => 'c',
            Op::R => 'r',
        }
    }
}

/// How a test matrix is laid out in its buffer. Every scheme leaves padding around or
/// between the elements, so a stray write is visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Column-major (`c`), ld = rows + 3.
    Col,
    /// Row-major (`r`), ld = cols + 2.
    Row,
    /// General (`g`): rs = 2, cs = 2·rows + 3, neither stride 1.
    Gen,
    /// Row-major stored bottom-up (`v`): rs = -(cols + 1), cs = 1.
    Neg,
}

impl Storage {
    /// Every scheme.
    pub const ALL: [Storage; 4] = [Storage::Col, Storage::Row, Storage::Gen, Storage::Neg];

    /// (row stride, column stride, buffer length) for a `rows`×`cols` matrix; the buffer
    /// has a few spare elements after the matrix too.
    pub fn layout(self, rows: usize, cols: usize) -> (isize, isize, usize) {
        let (r, c) = (rows as isize, cols as isize);
        let (rs, cs) = match self {
            Storage::Col => (1, r + 3),
            Storage::Row => (c + 2, 1),
            Storage::Gen => (2, 2 * r + 3),
            Storage::Neg => (-(c + 1), 1),
        };
        let span = if rows == 0 || cols == 0 {
            0
        } else {
            (r - 1) * rs.abs() + (c - 1) * cs.abs() + 1
        };
        (rs, cs, span as usize + 5)
    }

    /// The scheme's letter.
    pub fn letter(self) -> char {
        match self {
            Storage::Col => 'c',
            Storage::Row => 'r',
            Storage::Gen => 'g',
            Storage::Neg => 'v',
        }
    }

    /// The scheme with this letter.
    pub fn from_letter(letter: char) -> Option<Storage> {
        Storage::ALL.into_iter().find(|s| s.letter() == letter)
    }
}

/// A random matrix in a padded buffer with a given storage scheme.
#[derive(Clone, Debug)]
pub struct TestMatrix<T> {
    /// The whole buffer, padding included.
    pub buf: Vec<T>,
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Row stride.
    pub rs: isize,
    /// Column stride.
    pub cs: isize,
}

impl<T: Element> TestMatrix<T> {
    /// A `rows`×`cols` matrix stored as `storage`, every buffer element (padding too) random.
    pub fn random(
        rng: &mut Rng,
        values: Values,
        rows: usize,
        cols: usize,
        storage: Storage,
    ) -> Self {
        let (rs, cs, len) = storage.layout(rows, cols);
        let mut buf = vec![T::zero(); len];
        rng.fill(values, &mut buf);
        TestMatrix {
            buf,
            rows,
            cols,
            rs,
            cs,
        }
    }

    /// A read-only view of the matrix.
    pub fn view(&self) -> MatRef<'_, T> {
        MatRef::strided(&self.buf, self.rows, self.cols, self.rs, self.cs)
            .expect("layout fits its buffer")
    }

    /// Buffer index of element (i, j).
    pub fn index(&self, i: usize, j: usize) -> usize {
        let lowest = |d: usize, s: isize| if s < 0 { (d as isize - 1) * -s } else { 0 };
        let origin = lowest(self.rows, self.rs) + lowest(self.cols, self.cs);
        (origin + i as isize * self.rs + j as isize * self.cs) as usize
    }

    /// For every buffer index, whether it holds an element of the matrix (not padding).
    pub fn inside_mask(&self) -> Vec<bool> {
        let mut inside = vec![false; self.buf.len()];
        for j in 0..self.cols {
            for i in 0..self.rows {
                inside[self.index(i, j)] = true;
            }
        }
        inside
    }
}

impl<T: Scalar> TestMatrix<T> {
    /// A mutable view of the matrix (an output: C's element type is a `Scalar`).
    pub fn view_mut(&mut self) -> MatMut<'_, T> {
        MatMut::strided(&mut self.buf, self.rows, self.cols, self.rs, self.cs)
            .expect("layout fits its buffer")
    }
}

/// How a computed C compares with the reference computed on an identical copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// The largest `|computed - reference| / tolerance` over C's elements: 0 when they agree
    /// exactly, at most 1 within the rounding bound, infinite when an element that should be
    /// exact (zero magnitude) differs or either is NaN where the other is not.
    pub residual: f64,
    /// The first buffer index outside C whose value changed, if any.
    pub wrote_outside: Option<usize>,
}

/// Whether two values are the same, counting any NaN the same as any other NaN.
fn same_value<T: Scalar>(x: T, y: T) -> bool {
    x == y || (x.has_nan() && y.has_nan())
}

/// Whether a buffer holds what it held before (`before`), element by element, NaN for NaN:
/// a call that declined a problem, or wrote nothing, left it so.
pub fn unchanged<T: Scalar>(now: &[T], before: &[T]) -> bool {
    now.len() == before.len() && now.iter().zip(before).all(|(&x, &y)| same_value(x, y))
}

/// What a test case expects of C := alpha·op(A)·op(B) + beta·C, prepared before the call:
/// C's buffer as it was, and the reference result with its magnitudes ([`gemm_reference`]).
/// Where beta is 0, C is filled with NaN first, so that a call that reads it shows.
#[derive(Clone, Debug)]
pub struct Expected<T> {
    /// C's buffer before the call (NaN where beta is 0).
    pub original: Vec<T>,
    /// The reference result.
    pub want: TestMatrix<T>,
    /// Per-element magnitudes for [`compare`].
    pub magnitude: Vec<f64>,
}

impl<T: Scalar + Element<Acc = T>> Expected<T> {
    /// Prepares `c` (NaN under beta = 0) and computes the reference for alpha·a·b + beta·c.
    pub fn new(alpha: T, a: &MatRef<T>, b: &MatRef<T>, beta: T, c: &mut TestMatrix<T>) -> Self {
        if beta.is_zero() {
            c.buf.fill(T::from_parts(f64::NAN, f64::NAN));
        }
        let original = c.buf.clone();
        let mut want = c.clone();
        let magnitude = gemm_reference(&a.scaled(alpha), b, &mut want.view_mut().with_beta(beta));
        Expected {
            original,
            want,
            magnitude,
        }
    }

    /// `got` (the call's C) against the reference, at depth `k`.
    pub fn compare(&self, got: &TestMatrix<T>, k: usize) -> Comparison {
        compare(got, &self.want, &self.original, &self.magnitude, k)
    }
}

/// Compares `got` with `want` (both copies of `original`, the buffer before the call), using
/// the per-element magnitudes from [`gemm_reference`] and depth `k`.
pub fn compare<T: Scalar>(
    got: &TestMatrix<T>,
    want: &TestMatrix<T>,
    original: &[T],
    magnitude: &[f64],
    k: usize,
) -> Comparison {
    let mut residual: f64 = 0.0;
    for j in 0..got.cols {
        for i in 0..got.rows {
            let idx = got.index(i, j);
            let (x, y) = (got.buf[idx], want.buf[idx]);
            if x == y {
                continue;
            }
            let err = (x - y).abs1();
            let tol = tolerance::<T>(k, magnitude[j * got.rows + i]);
            residual = residual.max(if err.is_nan() || tol == 0.0 {
                f64::INFINITY
            } else {
                err / tol
            });
        }
    }
    let wrote_outside = got
        .inside_mask()
        .iter()
        .enumerate()
        .find(|&(idx, &inside)| !inside && !same_value(got.buf[idx], original[idx]))
        .map(|(idx, _)| idx);
    Comparison {
        residual,
        wrote_outside,
    }
}
