//! [`Transform`]: packs one K×N B, once, into the panels the kernel reads (⌈N/NR⌉ panels of
//! Kp×NR, k interleaved in groups for VNNI kernels; `layout.rs`), so that every execute
//! with [`super::BrgemmB::Packed`] skips packing B. This is the point of the `Pack32`
//! answer of [`super::pack_type`]; for `NoPack` kernels it still saves the per-call copy.
//!
//! The input is row-major K×N ([`PackType::NoPack`]) or stored transposed, N×K row-major
//! ([`PackType::Trans`]), with its leading dimension fixed or given at execute
//! ([`Ld::Runtime`]). The output's layout is fixed: its "leading dimension" is the panel
//! layout itself, which is why a brgemm on packed B takes no ldb.

use super::layout::{self, Packed};
use super::{BrgemmElement, Ld, PackType, bounds, pack_type};
use crate::cntx::{Cntx, GemmKernel};
use crate::error::{Error, ErrorKind, Result};
use crate::types::{Element, GemmPair};
use crate::view::MatRef;

/// Packs B (K×N) for the `(A, B)` kernel of a context; see the module docs.
///
/// ```
/// use oxblis::ukernel::{Ld, PackType, Transform};
/// let cntx = oxblis::context()?;
/// let tr = Transform::<i8, i8>::new(cntx, 5, 3, PackType::NoPack, Ld::Runtime)?
///     .expect("i8 is packable everywhere");
/// let b: Vec<i8> = (0..15).collect(); // 5×3, ld 3
/// let mut packed = vec![0i8; tr.out_len()];
/// tr.execute(&b, Some(3), &mut packed)?;
/// # Ok::<(), oxblis::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Transform<A: Element, B: Element> {
    kernel: GemmKernel<A, B>,
    k: usize,
    n: usize,
    input: PackType,
    in_ld: Ld,
    packed: Packed,
}

impl<A, B> Transform<A, B>
where
    A: BrgemmElement + GemmPair<B>,
    B: BrgemmElement,
{
    /// A transform of a K×N B given as `input` ([`PackType::NoPack`]: row-major K×N, ld ≥ N;
    /// [`PackType::Trans`]: N×K row-major, ld ≥ K) with leading dimension `in_ld`.
    ///
    /// `Err` (kind `InvalidView`) for a zero size, an `input` that is not a plain layout, a
    /// fixed `in_ld` shorter than its row, or sizes that overflow; `Ok(None)` when the pair
    /// has no brgemm here (fall back).
    pub fn new(
        cntx: &Cntx,
        k: usize,
        n: usize,
        input: PackType,
        in_ld: Ld,
    ) -> Result<Option<Self>> {
        let bad = |why: String| {
            Err(Error::new(
                ErrorKind::InvalidView,
                format!("Transform::new: {why}"),
            ))
        };
        if k == 0 || n == 0 {
            return bad(format!("K and N must be at least 1 (got {k}, {n})"));
        }
        let row = match input {
            PackType::NoPack => n,
            PackType::Trans => k,
            other => {
                return bad(format!(
                    "the input layout must be NoPack or Trans, not {other:?}"
                ));
            }
        };
        if let Ld::Fixed(ld) = in_ld
            && (ld < row || isize::try_from(ld).is_err())
        {
            return bad(format!("in_ld = {ld} must be at least {row} and fit isize"));
        }
        if pack_type(cntx, A::DATA_TYPE, B::DATA_TYPE) == PackType::Undef {
            return Ok(None);
        }
        let kernel = *cntx.kernel::<A, B>();
        let Some(packed) = Packed::new(&kernel, 1, n, k) else {
            return bad(format!("the packed size of {k}×{n} overflows"));
        };
        Ok(Some(Transform {
            kernel,
            k,
            n,
            input,
            in_ld,
            packed,
        }))
    }

    /// Elements of the packed output (the B offsets of a batch of packed Bs are multiples of
    /// it, or any offsets with this many elements behind each).
    pub fn out_len(&self) -> usize {
        self.packed.b_block
    }

    /// Packs `input` (leading dimension `in_ld` if declared runtime; if fixed, `None` or the
    /// same value) into `out[..out_len()]`. Errors, with `out` untouched, for a missing or
    /// conflicting leading dimension, an input block outside `input`, or a short `out`.
    pub fn execute(&self, input: &[B], in_ld: Option<usize>, out: &mut [B]) -> Result<()> {
        let (ld, rows, cols) = self.resolve(in_ld)?;
        bounds::block(
            &|| "Transform input".to_string(),
            input.len(),
            0,
            rows,
            cols,
            ld,
        )?;
        bounds::packed(
            &|| "Transform output".to_string(),
            out.len(),
            0,
            self.out_len(),
        )?;
        // SAFETY: the input block lies in `input` and the output in `out` (checked above);
        // `out` is borrowed exclusively, so they are disjoint.
        unsafe { self.execute_raw(input.as_ptr(), in_ld, out.as_mut_ptr()) }
    }

    /// [`Self::execute`] without the memory checks.
    ///
    /// # Safety
    /// The input block (K×N or N×K row-major at the resolved leading dimension) at `input` is
    /// readable, and [`Self::out_len`] elements at `out` are writable, initialised, and
    /// disjoint from it.
    pub unsafe fn execute_raw(
        &self,
        input: *const B,
        in_ld: Option<usize>,
        out: *mut B,
    ) -> Result<()> {
        let (ld, rows, cols) = self.resolve(in_ld)?;
        // SAFETY: the input block is readable (caller) and ld fits isize (checked).
        let stored = unsafe { MatRef::from_raw_parts(input, rows, cols, ld as isize, 1) }?;
        let b = if self.input == PackType::Trans {
            stored.t()
        } else {
            stored
        };
        // SAFETY: `out_len()` initialised elements at `out`, writable and disjoint (caller).
        let dst = unsafe { std::slice::from_raw_parts_mut(out, self.out_len()) };
        layout::pack_b(&self.kernel, &b, dst);
        Ok(())
    }

    /// The leading dimension this call uses and the stored shape (rows, cols).
    fn resolve(&self, given: Option<usize>) -> Result<(usize, usize, usize)> {
        let (rows, cols) = match self.input {
            PackType::Trans => (self.n, self.k),
            _ => (self.k, self.n),
        };
        let bad = |why: String| {
            Err(Error::new(
                ErrorKind::InvalidView,
                format!("Transform execute: {why}"),
            ))
        };
        let ld = match (self.in_ld, given) {
            (Ld::Fixed(x), None) => x,
            (Ld::Fixed(x), Some(y)) if x == y => x,
            (Ld::Fixed(x), Some(y)) => {
                return bad(format!("in_ld was fixed at {x}, execute gave {y}"));
            }
            (Ld::Runtime, Some(y)) => y,
            (Ld::Runtime, None) => {
                return bad("in_ld was declared runtime; execute must give it".into());
            }
        };
        if ld < cols || isize::try_from(ld).is_err() {
            return bad(format!(
                "in_ld = {ld} must be at least {cols} and fit isize"
            ));
        }
        Ok((ld, rows, cols))
    }
}
