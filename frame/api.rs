//! The public gemm entry points. Every one checks its arguments first (`frame/args.rs`) and
//! returns `Err` without touching C when they are bad, and none lets a panic escape: a panic
//! inside the library (a bug) comes back as `ErrorKind::Internal`.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::args::check_gemm;
use crate::cntx::Cntx;
use crate::error::{Result, internal_from_panic};
use crate::gks;
use crate::l3::gemm::gemm_front;
use crate::rntm::Rntm;
use crate::types::{Element, GemmPair};
use crate::view::{MatMut, MatRef};

/// C := alpha·op(A)·op(B) + beta·C, with global defaults.
///
/// op() rides on the views (`a.t()`, `a.h()`, `a.conj()`). `alpha` multiplies any scalars
/// the views carry (1 unless [`MatRef::scaled`] was used); `beta` replaces C's. BLAS rules
/// hold exactly: beta = 0 never reads C (NaN there is overwritten); alpha = 0 or k = 0 never
/// reads A or B; m, n or k = 0 is a valid call.
///
/// ```
/// use oxblis::{gemm, MatMut, MatRef};
/// // A is 2×3, B is 3×2, both column-major; C := A·B.
/// let a = [1.0, 4.0, 2.0, 5.0, 3.0, 6.0];
/// let b = [7.0, 9.0, 11.0, 8.0, 10.0, 12.0];
/// let mut c = [0.0f64; 4];
/// let a = MatRef::col_major(&a, 2, 3, 2)?;
/// let b = MatRef::col_major(&b, 3, 2, 3)?;
/// gemm(1.0, &a, &b, 0.0, &mut MatMut::col_major(&mut c, 2, 2, 2)?)?;
/// assert_eq!(c, [58.0, 139.0, 64.0, 154.0]);
/// # Ok::<(), oxblis::Error>(())
/// ```
pub fn gemm<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    alpha: A::Acc,
    a: &MatRef<A>,
    b: &MatRef<B>,
    beta: A::Acc,
    c: &mut MatMut<A::Acc>,
) -> Result<()> {
    gemm_ex(&a.scaled(alpha), b, &mut c.rb().with_beta(beta), None)
}

/// The expert form: C := alpha·op(A)·op(B) + beta·C where op() and alpha ride on `a` and `b`
/// (alpha is the product of their scalars) and beta on `c`; `rntm` says how to run the call
/// (`None`: global defaults).
///
/// ```
/// use oxblis::{gemm_ex, MatMut, MatRef, Rntm, c64};
/// let a = [c64::new(1.0, 1.0), c64::new(2.0, 0.0)]; // 2×1
/// let mut c = [c64::new(9.0, 9.0); 4];
/// let a = MatRef::col_major(&a, 2, 1, 2)?;
/// let rntm = Rntm::new().with_num_threads(1)?;
/// // C := 2·A·Aᴴ + 0·C
/// let mut cv = MatMut::col_major(&mut c, 2, 2, 2)?;
/// gemm_ex(&a.scaled(c64::new(2.0, 0.0)), &a.h(), &mut cv, Some(&rntm))?;
/// assert_eq!(c[0], c64::new(4.0, 0.0)); // 2·|1+i|²
/// assert_eq!(c[1], c64::new(4.0, -4.0)); // C(1,0) = 2·a₁·conj(a₀) = 2·2·(1−i)
/// assert_eq!(c[2], c64::new(4.0, 4.0)); // C(0,1) = 2·a₀·conj(a₁)
/// # Ok::<(), oxblis::Error>(())
/// ```
pub fn gemm_ex<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    rntm: Option<&Rntm>,
) -> Result<()> {
    gemm_with_cntx(a, b, c, gks::context()?, rntm)
}

/// [`gemm_ex`] with an explicit context instead of the chosen one: to run a particular
/// configuration (see [`crate::context_named`], [`crate::supported_contexts`]) or modified
/// blocksizes ([`Cntx::with_blocksizes`]).
pub fn gemm_with_cntx<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    cntx: &Cntx,
    rntm: Option<&Rntm>,
) -> Result<()> {
    // An Rntm is validated by its constructors; None means the global defaults.
    let defaults = Rntm::default();
    let rntm = rntm.unwrap_or(&defaults);
    catch_unwind(AssertUnwindSafe(|| gemm_unguarded(a, b, c, cntx, rntm)))
        .unwrap_or_else(|panic| Err(internal_from_panic(&*panic)))
}

/// [`gemm_with_cntx`] without its `catch_unwind`, for entry points that catch panics
/// themselves (the BLAS layer), so that a call is guarded once.
pub(crate) fn gemm_unguarded<A: GemmPair<B>, B: Element<Acc = A::Acc>>(
    a: &MatRef<A>,
    b: &MatRef<B>,
    c: &mut MatMut<A::Acc>,
    cntx: &Cntx,
    rntm: &Rntm,
) -> Result<()> {
    check_gemm(a, b, c)?;
    // With a sandbox feature enabled, it sees the call first (sandbox/mod.rs).
    if let Some(result) = crate::sandbox::offer(cntx, a, b, &mut c.rb(), rntm) {
        return result;
    }
    gemm_front(cntx, a, b, c, rntm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::kernels::GemmUkrArgs;

    unsafe fn panicking_ukr(_: &GemmUkrArgs<f64, f64>) {
        panic!("injected kernel failure");
    }

    #[test]
    fn a_panic_inside_the_library_comes_back_as_an_error() {
        // SAFETY: the kernel never touches memory; it only panics.
        let cntx = unsafe { Cntx::generic_with_test_dgemm(panicking_ukr, false) };
        let a = [1.0; 16];
        let mut c = [0.0; 16];
        let av = MatRef::col_major(&a, 4, 4, 4).unwrap();
        let mut cv = MatMut::col_major(&mut c, 4, 4, 4).unwrap();
        let e = gemm_with_cntx(&av, &av, &mut cv, &cntx, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert!(e.message().contains("injected kernel failure"), "{e}");
    }
}
