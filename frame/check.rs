//! The test oracle, shared by the crate's tests, the integration tests and the `testsuite`
//! binary: a reproducible random generator, a plainly written reference gemm with the exact
//! BLAS semantics, and the error bound results are judged by. Nothing in the compute path
//! uses this module.

use crate::types::Scalar;
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
    pub fn value<T: Scalar>(&mut self, values: Values) -> T {
        let mut part = || match values {
            Values::SmallIntegers => self.below(9) as f64 - 4.0,
            Values::Uniform => self.uniform(),
        };
        let re = part();
        let im = if T::IS_COMPLEX { part() } else { 0.0 };
        T::from_parts(re, im)
    }

    /// Fills a buffer with random values of the given class.
    pub fn fill<T: Scalar>(&mut self, values: Values, buf: &mut [T]) {
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
/// `|alpha|·Σ|a_ip||b_pj| + |beta|·|c_ij|` that rounding errors are proportional to.
pub fn gemm_reference<T: Scalar>(a: &MatRef<T>, b: &MatRef<T>, c: &mut MatMut<T>) -> Vec<f64> {
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
                    let (x, y) = (a.get(i, p).unwrap(), b.get(p, j).unwrap());
                    sum = sum + x * y;
                    abs_sum += x.abs1() * y.abs1();
                }
            }
            let old = if beta.is_zero() { T::zero() } else { c.get(i, j).unwrap() };
            let new = if beta.is_zero() { alpha * sum } else { alpha * sum + beta * old };
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
