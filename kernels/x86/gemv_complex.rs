//! The gemv body for complex dtypes, written once over [`Simd`] (its element type is the
//! real part's) and instantiated by the kernel files (`kernels/skx/gemv_c32.rs`, …) inside
//! their `#[target_feature]` shells. The contract is `GemvUkr` in `kernels/mod.rs`.
//!
//! Complex numbers are interleaved (re, im), LANES/2 to a register.
//!
//! * A's columns contiguous, y contiguous, A not conjugated: axpy form. y := beta·y, then for
//!   each column y += A(:, p)·s with s = alpha·op(x(p)), the complex product done as in the
//!   complex tile kernels (pair swap and `fmaddsub`).
//! * A's rows contiguous, x contiguous: dot form. Per row two accumulators, Σ a·x lane by lane
//!   (a_re·x_re, a_im·x_im) and Σ a·swap(x) (a_re·x_im, a_im·x_re); the real and imaginary
//!   parts of the dot product are sums and differences of their even and odd lanes, with the
//!   signs set by which of A and x is conjugated.
//! * Anything else: the reference kernel.
//!
//! beta == 0: y is not read.

use num_complex::Complex;

use crate::kernels::GemvUkrArgs;
use crate::kernels::reference::gemv_ukr;
use crate::kernels::x86::gemv_real::{Form, form};
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
        for p in 0..k {
            let xp = *args.x.offset(p as isize * args.inc_x);
            let s = args.alpha * if args.conj_x { xp.conj() } else { xp };
            let (s_re, s_im) = (V::splat(s.re), V::splat(s.im));
            let col = args.a.offset(p as isize * args.cs_a);
            for i in (0..m).step_by(per_vector) {
                let mask = V::mask(2 * (m - i));
                let a = V::load_masked(col.add(i).cast::<V::Elem>(), mask);
                let y = args.y.add(i).cast::<V::Elem>();
                let prod = V::fmaddsub(a, s_re, V::mul(V::swap_pairs(a), s_im));
                V::store_masked(y, mask, V::add(V::load_masked(y, mask), prod));
            }
        }
    }
}

/// y(i) := alpha·(op(A(i, :))·op(x)) + beta·y(i), row by row (A row-stored, x contiguous).
#[inline(always)]
unsafe fn dot_form<V: Simd>(args: &GemvUkrArgs<Complex<V::Elem>, Complex<V::Elem>>)
where
    V::Elem: Scalar,
    Complex<V::Elem>: Scalar,
{
    let (m, k) = (args.m, args.k);
    let per_vector = V::LANES / 2;
    // SAFETY: columns below k (masked at the tail, two reals per element), rows below m.
    unsafe {
        let x = args.x.cast::<V::Elem>();
        for i in 0..m {
            let row = args.a.offset(i as isize * args.rs_a).cast::<V::Elem>();
            let (mut direct, mut crossed) = (V::zero(), V::zero());
            for p in (0..k).step_by(per_vector) {
                let mask = V::mask(2 * (k - p));
                let a = V::load_masked(row.add(2 * p), mask);
                let xv = V::load_masked(x.add(2 * p), mask);
                direct = V::fma(a, xv, direct);
                crossed = V::fma(a, V::swap_pairs(xv), crossed);
            }
            let mut lanes = [[V::Elem::zero(); 16]; 2];
            V::store(lanes[0].as_mut_ptr(), direct);
            V::store(lanes[1].as_mut_ptr(), crossed);
            let sum = |l: &[V::Elem; 16], odd: bool| {
                l[..V::LANES]
                    .iter()
                    .skip(usize::from(odd))
                    .step_by(2)
                    .fold(V::Elem::zero(), |s, &v| s + v)
            };
            // direct: even lanes Σ a_re·x_re, odd Σ a_im·x_im; crossed: even Σ a_re·x_im, odd
            // Σ a_im·x_re. Conjugating a factor flips the sign of its imaginary part.
            let (rr, ii) = (sum(&lanes[0], false), sum(&lanes[0], true));
            let (ri, ir) = (sum(&lanes[1], false), sum(&lanes[1], true));
            let (ca, cx) = (args.conj_a, args.conj_x);
            let re = if ca == cx { rr - ii } else { rr + ii };
            let im = match (ca, cx) {
                (false, false) => ri + ir,
                (false, true) => ir - ri,
                (true, false) => ri - ir,
                (true, true) => -(ri + ir),
            };
            let y = args.y.offset(i as isize * args.inc_y);
            let old = if args.beta.is_zero() {
                Complex::<V::Elem>::zero()
            } else {
                args.beta * *y
            };
            *y = args.alpha * Complex::new(re, im) + old;
        }
    }
}
