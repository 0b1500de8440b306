//! The gemv body for complex dtypes, written once over [`Simd`] (its element type is the
//! real part's) and instantiated by the kernel files (`kernels/skx/gemv_c32.rs`, …) inside
//! their `#[target_feature]` shells. The contract is `GemvUkr` in `kernels/mod.rs`.
//!
//! Complex numbers are interleaved (re, im), LANES/2 to a register.
//!
//! * A's columns contiguous, y contiguous, A not conjugated: axpy form. For each block of 4
//!   columns y += Σ_j A(:, p+j)·s_j with s_j = alpha·op(x(p+j)) (the first block scales y by
//!   beta on the way, as in `gemv_real.rs`): the products' halves Σ a·s_re and Σ swap(a)·s_im
//!   are accumulated apart and joined with one `fmaddsub` per vector of y.
//! * A's rows contiguous, x contiguous: dot form, 4 rows at a time sharing each load of x.
//!   Per row two accumulators, Σ a·x lane by lane (a_re·x_re, a_im·x_im) and Σ a·swap(x)
//!   (a_re·x_im, a_im·x_re); the real and imaginary parts of the dot product are sums and
//!   differences of their even and odd lanes, with the signs set by which of A and x is
//!   conjugated.
//! * Anything else: the reference kernel.
//!
//! Several streams of A in flight and whole vectors with plain loads, as in `gemv_real.rs`
//! (one column or row at a time with masked loads ran at a third to two thirds of these
//! forms, docs/Performance.md). beta == 0: y is not read.

use num_complex::Complex;

use crate::kernels::GemvUkrArgs;
use crate::kernels::reference::gemv_ukr;
use crate::kernels::x86::gemv_real::{AxpyColumns, Form, axpy_blocks, form};
use crate::kernels::x86::simd::Simd;
use crate::types::{Element, Scalar};

/// The body. See the module docs.
///
/// # Safety
/// The `GemvUkr` contract, called from a function compiled with `V`'s target features on a
/// CPU that has them.
#[inline(always)]
pub(crate) unsafe fn gemv_complex<V: Simd>(args: &GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>)
where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    // SAFETY: passed on; each form touches only A(i, p), x(p), y(i) with i < m, p < k.
    unsafe {
        match form(args, V::LANES / 2, !args.conj_a) {
            Form::Dot => dot_form::<V>(args),
            Form::Axpy => axpy_form::<V>(args),
            Form::Reference => gemv_ukr(args),
        }
    }
}

/// y := beta·y + Σ_p A(:, p)·(alpha·op(x(p))) (A column-stored and not conjugated).
#[inline(always)]
unsafe fn axpy_form<V: Simd>(args: &GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>)
where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    let (m, k) = (args.m, args.k);
    let per_vector = V::LANES / 2;
    // SAFETY: rows below m (masked at the tail, two reals per row), columns below k.
    unsafe {
        if k > 0 {
            return axpy_blocks::<AXPY_COLS>(k, &ComplexColumns::<V>(args));
        }
        // No column to fold the scaling into: y := beta·y alone.
        for i in (0..m).step_by(per_vector) {
            let mask = V::mask(2 * (m - i));
            let y = args.y.add(i).cast::<V::Elem>();
            let v = if args.beta.is_zero() {
                V::zero()
            } else {
                let old = V::load_masked(y, mask);
                let (b_re, b_im) = (V::splat(args.beta.re), V::splat(args.beta.im));
                V::fmaddsub(old, b_re, V::mul(V::swap_pairs(old), b_im))
            };
            V::store_masked(y, mask, v);
        }
    }
}

/// Columns the axpy form reads at once: each load and store of y serves this many streams
/// of A.
const AXPY_COLS: usize = 4;

/// The complex axpy form's blocks ([`axpy_columns`]).
struct ComplexColumns<'a, V: Simd>(&'a GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>)
where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar;

impl<V: Simd> AxpyColumns for ComplexColumns<'_, V>
where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    #[inline(always)]
    unsafe fn columns<const C: usize, const FIRST: bool>(&self, p: usize) {
        // SAFETY: passed on.
        unsafe { axpy_columns::<V, C, FIRST>(self.0, p) }
    }
}

/// y += Σ_j A(:, p+j)·s_j, s_j = alpha·op(x(p+j)), j < C, one vector of rows at a time. The
/// products' two halves are summed apart, Σ a·s_re and Σ swap(a)·s_im, and joined once per
/// vector (even lanes subtract, odd lanes add), so each column costs two FMAs and a swap.
/// With FIRST, y's old value enters scaled by beta the same way (y·beta_re into the first
/// half, swap(y)·beta_im into the second; not read when beta = 0).
///
/// # Safety
/// As [`axpy_form`], with `p + C <= k`.
#[inline(always)]
unsafe fn axpy_columns<V: Simd, const C: usize, const FIRST: bool>(
    args: &GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
    p: usize,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    // SAFETY: the caller's; rows below m (masked at the tail, two reals per row), columns
    // p..p+C.
    unsafe {
        let cols: [*const V::Elem; C] = std::array::from_fn(|j| {
            args.a
                .offset((p + j) as isize * args.cs_a)
                .cast::<V::Elem>()
        });
        let scales: [Complex<V::Elem>; C] = std::array::from_fn(|j| {
            let xp = *args.x.offset((p + j) as isize * args.inc_x);
            args.alpha * if args.conj_x { xp.conj() } else { xp }
        });
        let s_re: [V; C] = std::array::from_fn(|j| V::splat(scales[j].re));
        let s_im: [V; C] = std::array::from_fn(|j| V::splat(scales[j].im));
        let one = V::splat(V::Elem::one());
        let (b_re, b_im) = (V::splat(args.beta.re), V::splat(args.beta.im));
        // The two halves' starting values from y's old value.
        let start = |old: V| {
            if !FIRST {
                (old, V::zero())
            } else {
                (V::mul(old, b_re), V::mul(V::swap_pairs(old), b_im))
            }
        };
        let beta_is_zero = FIRST && args.beta.is_zero();
        let per_vector = V::LANES / 2;
        // Whole vectors with plain loads (AVX2's masked loads are slow), then the tail.
        let mut i = 0;
        while i + per_vector <= args.m {
            let y = args.y.add(i).cast::<V::Elem>();
            let (mut direct, mut crossed) = if beta_is_zero {
                (V::zero(), V::zero())
            } else {
                start(V::load(y))
            };
            for j in 0..C {
                let a = V::load(cols[j].add(2 * i));
                direct = V::fma(a, s_re[j], direct);
                crossed = V::fma(V::swap_pairs(a), s_im[j], crossed);
            }
            V::store(y, V::fmaddsub(direct, one, crossed));
            i += per_vector;
        }
        if i < args.m {
            let mask = V::mask(2 * (args.m - i));
            let y = args.y.add(i).cast::<V::Elem>();
            let (mut direct, mut crossed) = if beta_is_zero {
                (V::zero(), V::zero())
            } else {
                start(V::load_masked(y, mask))
            };
            for j in 0..C {
                let a = V::load_masked(cols[j].add(2 * i), mask);
                direct = V::fma(a, s_re[j], direct);
                crossed = V::fma(V::swap_pairs(a), s_im[j], crossed);
            }
            V::store_masked(y, mask, V::fmaddsub(direct, one, crossed));
        }
    }
}

/// y(i) := alpha·(op(A(i, :))·op(x)) + beta·y(i), four rows at a time (A row-stored, x
/// contiguous; two vectors a step with 32 registers, one with 16), then the remaining rows
/// one by one.
#[inline(always)]
unsafe fn dot_form<V: Simd>(args: &GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>)
where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    // SAFETY: rows below m, columns below k (masked at the tail), as the contract allows.
    unsafe {
        let mut i = 0;
        if V::REGISTERS >= 32 {
            while i + 4 <= args.m {
                dot_rows::<V, 4, 2>(args, i);
                i += 4;
            }
        } else {
            while i + 4 <= args.m {
                dot_rows::<V, 4, 1>(args, i);
                i += 4;
            }
        }
        while i < args.m {
            dot_rows::<V, 1, 2>(args, i);
            i += 1;
        }
    }
}

/// Rows i..i+R of the dot form: per row two accumulators, two vectors per k step.
///
/// # Safety
/// As [`dot_form`], with `i + R <= m`.
#[inline(always)]
unsafe fn dot_rows<V: Simd, const R: usize, const U: usize>(
    args: &GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>,
    i: usize,
) where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    // Reals, not complex elements, from here on.
    let (len, lanes) = (2 * args.k, V::LANES);
    // SAFETY: the caller's; loads stay below element k of rows i..i+R and of x.
    unsafe {
        let x = args.x.cast::<V::Elem>();
        let rows: [*const V::Elem; R] = std::array::from_fn(|r| {
            args.a
                .offset((i + r) as isize * args.rs_a)
                .cast::<V::Elem>()
        });
        // [row][u]: direct Σ a·x lane by lane, crossed Σ a·swap(x).
        let mut direct = [[V::zero(); U]; R];
        let mut crossed = [[V::zero(); U]; R];
        let mut q = 0;
        while q + U * lanes <= len {
            for u in 0..U {
                let xv = V::load(x.add(q + u * lanes));
                let xs = V::swap_pairs(xv);
                for r in 0..R {
                    let a = V::load(rows[r].add(q + u * lanes));
                    direct[r][u] = V::fma(a, xv, direct[r][u]);
                    crossed[r][u] = V::fma(a, xs, crossed[r][u]);
                }
            }
            q += U * lanes;
        }
        while q < len {
            let mask = V::mask(len - q);
            let xv = V::load_masked(x.add(q), mask);
            let xs = V::swap_pairs(xv);
            for r in 0..R {
                let a = V::load_masked(rows[r].add(q), mask);
                direct[r][0] = V::fma(a, xv, direct[r][0]);
                crossed[r][0] = V::fma(a, xs, crossed[r][0]);
            }
            q += lanes;
        }
        // direct: even lanes Σ a_re·x_re, odd Σ a_im·x_im; crossed: even Σ a_re·x_im, odd
        // Σ a_im·x_re. Conjugating a factor flips the sign of its imaginary part, so
        // re = rr ∓ ii and im = ±ri ± ir: each a sum of all lanes after a sign per parity.
        let (ca, cx) = (args.conj_a, args.conj_x);
        let one = V::Elem::one();
        let re_signs = (one, if ca == cx { -one } else { one });
        let im_signs = match (ca, cx) {
            (false, false) => (one, one),
            (false, true) => (-one, one),
            (true, false) => (one, -one),
            (true, true) => (-one, -one),
        };
        let signs = |(even, odd): (V::Elem, V::Elem)| {
            let mut pattern = [V::Elem::zero(); 16];
            for (l, s) in pattern.iter_mut().enumerate() {
                *s = if l % 2 == 0 { even } else { odd };
            }
            V::load(pattern.as_ptr())
        };
        let (re_signs, im_signs) = (signs(re_signs), signs(im_signs));
        for r in 0..R {
            let sum = |acc: &[V; U]| acc[1..].iter().fold(acc[0], |s, &v| V::add(s, v));
            let re = V::sum_lanes(V::mul(sum(&direct[r]), re_signs));
            let im = V::sum_lanes(V::mul(sum(&crossed[r]), im_signs));
            let y = args.y.offset((i + r) as isize * args.inc_y);
            let old = if args.beta.is_zero() {
                Complex::<V::Elem>::zero()
            } else {
                args.beta * *y
            };
            *y = args.alpha * Complex::new(re, im) + old;
        }
    }
}
