//! The [`Brgemm`] object: a batch-reduce gemm on one M×N block of C,
//!
//! ```text
//!     C := post_ops( [C +] Σ_{i < batch} A_i · B_i )      all row-major, A_i M×K, B_i K×N
//! ```
//!
//! Life cycle, as oneDNN's: [`Brgemm::new`] (comes back `Ok(None)` when this context cannot
//! serve the pair), configure ([`Brgemm::set_add_c`]), [`Brgemm::finalize`] (`false`:
//! unsupported, fall back), then [`Brgemm::scratchpad_size`] and any number of executes, from
//! any number of threads, each with its own scratchpad and C.
//!
//! How an execute runs: every A_i is packed into the scratchpad as ⌈M/MR⌉ MR-row panels
//! (and every B_i as ⌈N/NR⌉ NR-column panels, unless B comes packed by a [`super::Transform`]);
//! then, for each MR×NR tile of C (jr outer, so a B panel stays in L1 across the ir tiles),
//! the configuration's microkernel is called once per batch element on a stack tile, beta 0
//! for the first and 1 after, and the tile's valid part is merged into C with add-C and the
//! post-ops. The batch is reduced in registers and the stack tile; C is read and written
//! once per execute. One thread; no allocation.

use std::mem::MaybeUninit;

use super::layout::{self, Packed};
use super::post_ops::PostOps;
use super::scratchpad::Scratchpad;
use super::{BrgemmElement, Ld, PackType, bounds, hw_context, pack_type, pack_type_of};
use crate::cntx::{Cntx, GemmKernel};
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::{GemmUkrArgs, MAX_TILE_ELEMS};
use crate::types::{Element, GemmPair, Scalar};
use crate::view::MatRef;

/// Alignment of the packed blocks inside a scratchpad, in bytes.
const SCRATCH_ALIGN: usize = 64;

/// The sizes of a brgemm: C is `m`×`n`, each A_i `m`×`k`, each B_i `k`×`n`, and `batch`
/// (A_i, B_i) pairs are reduced. All at least 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Rows of A_i and C.
    pub m: usize,
    /// Columns of B_i and C.
    pub n: usize,
    /// Columns of A_i, rows of B_i.
    pub k: usize,
    /// How many (A_i, B_i) pairs one execute reduces.
    pub batch: usize,
}

/// How B is given to the executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BrgemmB {
    /// Row-major K×N blocks with this leading dimension (≥ N), fixed or given at execute;
    /// the execute packs them into the scratchpad.
    Plain(Ld),
    /// Blocks packed by a [`super::Transform`] built from the same context for the same K and
    /// N (each `Transform::out_len()` elements long, at the batch's B offsets). Their layout
    /// fixes "ldb": an `ldb` given at execute is ignored, as seed 002 specifies.
    Packed,
}

/// The leading dimensions given at execute time: required for those declared
/// [`Ld::Runtime`] at construction; for fixed ones `None`, or the same value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ActualLds {
    /// Leading dimension of every A_i (≥ K).
    pub lda: Option<usize>,
    /// Leading dimension of every plain B_i (≥ N); ignored for a packed B.
    pub ldb: Option<usize>,
    /// Leading dimension of C (≥ N).
    pub ldc: Option<usize>,
}

impl ActualLds {
    /// None given: every leading dimension was fixed at construction.
    pub const FIXED: ActualLds = ActualLds {
        lda: None,
        ldb: None,
        ldc: None,
    };

    /// All three given.
    pub fn new(lda: usize, ldb: usize, ldc: usize) -> ActualLds {
        ActualLds {
            lda: Some(lda),
            ldb: Some(ldb),
            ldc: Some(ldc),
        }
    }
}

/// The leading dimensions one execute uses (`ldb` is unused for a packed B).
#[derive(Clone, Copy, Debug)]
struct Lds {
    a: usize,
    b: usize,
    c: usize,
}

/// A batch-reduce gemm object for the element pair `(A, B)`, C in `A::Acc` (see the module
/// docs and `docs/Brgemm.md`).
///
/// ```
/// use oxblis::ukernel::{ActualLds, Brgemm, BrgemmB, Dims, Ld, Scratchpad};
/// // C (2×2) := A_0·B_0 + A_1·B_1, with A_i 2×3 and B_i 3×2, all row-major.
/// let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, /* A_1 */ 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// let b = [1.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, /* B_1 */ 0.0, 0.0, 0.0, 0.0, 1.0, 1.0];
/// let dims = Dims { m: 2, n: 2, k: 3, batch: 2 };
/// let mut brg = Brgemm::<f32, f32>::new(oxblis::context()?, dims, Ld::Fixed(3), BrgemmB::Plain(Ld::Fixed(2)), Ld::Fixed(2))?
///     .expect("f32 brgemm is available everywhere");
/// assert!(brg.finalize());
/// let mut scratch = Scratchpad::new(brg.scratchpad_size());
/// let mut c = [f32::NAN; 4]; // add-C is off: C is written, not read
/// brg.execute(&a, &b, &[(0, 0), (6, 6)], &mut c, &mut scratch, ActualLds::FIXED)?;
/// assert_eq!(c, [2.0, 3.0, 5.0, 6.0]);
/// # Ok::<(), oxblis::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Brgemm<A: Element, B: Element> {
    kernel: GemmKernel<A, B>,
    dims: Dims,
    lda: Ld,
    b: BrgemmB,
    ldc: Ld,
    add_c: bool,
    /// Set by a successful `finalize`: the packed sizes and the scratchpad's bytes.
    plan: Option<Plan>,
}

/// What `finalize` works out.
#[derive(Clone, Copy, Debug)]
struct Plan {
    packed: Packed,
    /// Byte offset of the packed B blocks in the scratchpad.
    b_at: usize,
    /// Bytes of scratchpad an execute needs.
    bytes: usize,
}

fn invalid(message: String) -> Error {
    Error::new(ErrorKind::InvalidView, message)
}

/// Checks a leading dimension fixed at construction against the row it must hold.
fn check_fixed(name: &str, ld: Ld, row: usize, row_name: &str) -> Result<()> {
    match ld {
        Ld::Fixed(x) if x < row => Err(invalid(format!(
            "Brgemm::new: {name} = {x} must be at least {row_name} = {row}"
        ))),
        Ld::Fixed(x) if isize::try_from(x).is_err() => Err(invalid(format!(
            "Brgemm::new: {name} = {x} overflows isize"
        ))),
        _ => Ok(()),
    }
}

/// The leading dimension an execute uses: the fixed one (an actual value, if given, must
/// agree) or the runtime one (which must be given), at least `row`.
fn pick_ld(name: &str, declared: Ld, given: Option<usize>, row: usize) -> Result<usize> {
    let ld = match (declared, given) {
        (Ld::Fixed(x), None) => x,
        (Ld::Fixed(x), Some(y)) if x == y => x,
        (Ld::Fixed(x), Some(y)) => {
            return Err(invalid(format!(
                "brgemm execute: {name} was fixed at {x} at construction, execute gave {y}"
            )));
        }
        (Ld::Runtime, Some(y)) => y,
        (Ld::Runtime, None) => {
            return Err(invalid(format!(
                "brgemm execute: {name} was declared runtime at construction; execute must give it"
            )));
        }
    };
    if ld < row {
        return Err(invalid(format!(
            "brgemm execute: {name} = {ld} is less than the row length {row}"
        )));
    }
    if isize::try_from(ld).is_err() {
        return Err(invalid(format!(
            "brgemm execute: {name} = {ld} overflows isize"
        )));
    }
    Ok(ld)
}

impl<A, B> Brgemm<A, B>
where
    A: BrgemmElement + GemmPair<B>,
    B: BrgemmElement,
    A::Acc: PartialOrd,
{
    /// A brgemm of `dims` on `cntx`'s kernel for `(A, B)`, with A_i's, B_i's and C's leading
    /// dimensions fixed now or given at execute ([`Ld::Runtime`]).
    ///
    /// * `Err` (kind `InvalidView`): a size is 0, or a fixed leading dimension is shorter
    ///   than its row (lda < K, ldb < N, ldc < N) or overflows `isize`.
    /// * `Ok(None)`: a valid request this context cannot serve ([`super::pack_type`] is
    ///   `Undef` for the pair): fall back, as with oneDNN's `allow_empty`.
    pub fn new(cntx: &Cntx, dims: Dims, lda: Ld, b: BrgemmB, ldc: Ld) -> Result<Option<Self>> {
        let Dims { m, n, k, batch } = dims;
        if m == 0 || n == 0 || k == 0 || batch == 0 {
            return Err(invalid(format!(
                "Brgemm::new: M, N, K and batch must be at least 1 (got {m}, {n}, {k}, {batch})"
            )));
        }
        check_fixed("lda", lda, k, "K")?;
        if let BrgemmB::Plain(ldb) = b {
            check_fixed("ldb", ldb, n, "N")?;
        }
        check_fixed("ldc", ldc, n, "N")?;
        if pack_type(cntx, A::DATA_TYPE, B::DATA_TYPE) == PackType::Undef {
            return Ok(None);
        }
        Ok(Some(Brgemm {
            kernel: *cntx.kernel::<A, B>(),
            dims,
            lda,
            b,
            ldc,
            add_c: false,
            plan: None,
        }))
    }

    /// With `true`, executes add to C (`C += Σ A_i·B_i`, then post-ops); with `false` (the
    /// default) they overwrite it and never read it. Needs a new [`Self::finalize`].
    pub fn set_add_c(&mut self, add_c: bool) {
        self.add_c = add_c;
        self.plan = None;
    }

    /// Whether executes add to C.
    pub fn add_c(&self) -> bool {
        self.add_c
    }

    /// The sizes.
    pub fn dims(&self) -> Dims {
        self.dims
    }

    /// The name of the microkernel that runs, e.g. `skx_f32_32x12`.
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name()
    }

    /// The kernel's tile, (MR, NR): blocks of C that are multiples of it waste no work.
    pub fn tile(&self) -> (usize, usize) {
        let bs = self.kernel.blocksizes();
        (bs.mr, bs.nr)
    }

    /// How this brgemm's kernel wants B (never `Undef`: such a brgemm is not constructed).
    pub fn b_pack_type(&self) -> PackType {
        pack_type_of(&self.kernel)
    }

    /// Prepares the object for executes. `false` means this request cannot run here (today:
    /// its scratchpad size overflows `isize`): fall back. Never panics.
    pub fn finalize(&mut self) -> bool {
        self.plan = self.make_plan();
        self.plan.is_some()
    }

    fn make_plan(&self) -> Option<Plan> {
        let Dims { m, n, k, batch } = self.dims;
        let packed = Packed::new(&self.kernel, m, n, k)?;
        let a_bytes = batch
            .checked_mul(packed.a_block)?
            .checked_mul(size_of::<A>())?;
        let b_at = a_bytes.checked_next_multiple_of(SCRATCH_ALIGN)?;
        let b_bytes = match self.b {
            BrgemmB::Plain(_) => batch
                .checked_mul(packed.b_block)?
                .checked_mul(size_of::<B>())?,
            BrgemmB::Packed => 0,
        };
        let bytes = b_at.checked_add(b_bytes)?;
        isize::try_from(bytes).ok()?;
        Some(Plan {
            packed,
            b_at,
            bytes,
        })
    }

    /// Bytes of scratchpad each execute needs (0 before a successful [`Self::finalize`]).
    /// Executes running at the same time need one scratchpad each.
    pub fn scratchpad_size(&self) -> usize {
        self.plan.map_or(0, |p| p.bytes)
    }

    /// Elements of one packed B_i (what a [`super::Transform`] for this K and N writes).
    pub fn packed_b_len(&self) -> usize {
        self.plan.map_or(0, |p| p.packed.b_block)
    }

    /// oneDNN's "set up this thread's hardware (AMX: the tile configuration) before a run of
    /// executes": the kernel's state stays set on this thread until
    /// [`super::release_hw_context`], so executes skip configuring it each time. Optional:
    /// without it every execute sets and releases the state itself. Nothing to do for
    /// kernels without hardware state (`hw_context.rs`).
    pub fn set_hw_context(&self) {
        hw_context::set_for(&self.kernel);
    }

    /// `C := [C +] Σ_i A_i·B_i`, A_i at `a[offsets[i].0..]`, B_i at `b[offsets[i].1..]`
    /// (offsets in elements), every block checked against its slice first. Errors (and C
    /// untouched) for: no successful finalize, `offsets.len() != batch`, a missing or
    /// conflicting leading dimension, a block outside its slice, a scratchpad smaller than
    /// [`Self::scratchpad_size`].
    pub fn execute(
        &self,
        a: &[A],
        b: &[B],
        offsets: &[(usize, usize)],
        c: &mut [A::Acc],
        scratchpad: &mut Scratchpad,
        lds: ActualLds,
    ) -> Result<()> {
        self.execute_post_ops(a, b, offsets, c, scratchpad, lds, &PostOps::default())
    }

    /// [`Self::execute`] followed by post-ops (scale, bias, ReLU; `post_ops.rs`).
    #[allow(clippy::too_many_arguments)]
    pub fn execute_post_ops(
        &self,
        a: &[A],
        b: &[B],
        offsets: &[(usize, usize)],
        c: &mut [A::Acc],
        scratchpad: &mut Scratchpad,
        lds: ActualLds,
        post_ops: &PostOps<A::Acc>,
    ) -> Result<()> {
        let checked = self.check_call(offsets, lds, post_ops)?;
        let (plan, ld) = checked;
        let Dims { m, n, k, .. } = self.dims;
        if scratchpad.len() < plan.bytes {
            return Err(invalid(format!(
                "brgemm execute: the scratchpad has {} bytes, this brgemm needs {}",
                scratchpad.len(),
                plan.bytes
            )));
        }
        for (i, &(off_a, off_b)) in offsets.iter().enumerate() {
            bounds::block(
                &|| format!("A of batch element {i}"),
                a.len(),
                off_a,
                m,
                k,
                ld.a,
            )?;
            match self.b {
                BrgemmB::Plain(_) => {
                    let what = || format!("B of batch element {i}");
                    bounds::block(&what, b.len(), off_b, k, n, ld.b)?
                }
                BrgemmB::Packed => {
                    let what = || format!("B of batch element {i}");
                    bounds::packed(&what, b.len(), off_b, plan.packed.b_block)?
                }
            }
        }
        bounds::block(&|| "C".to_string(), c.len(), 0, m, n, ld.c)?;
        // SAFETY: every A_i and B_i lies inside `a` and `b` and C inside `c` (just checked;
        // `c` is borrowed exclusively, so it overlaps neither), the scratchpad is an owned,
        // initialised, 64-byte aligned buffer of at least `plan.bytes` bytes, and `check_call`
        // validated the plan, the offsets' count, the leading dimensions and the bias.
        unsafe {
            self.run(
                a.as_ptr(),
                b.as_ptr(),
                offsets,
                c.as_mut_ptr(),
                scratchpad.as_mut_ptr(),
                checked,
                post_ops,
            )
        }
    }

    /// The raw tier of [`Self::execute_post_ops`], for hot loops: the same computation with
    /// only the O(1) checks (finalized, `offsets.len()`, leading dimensions, bias length);
    /// nothing about the memory can be checked. Pass `&PostOps::default()` for none.
    ///
    /// # Safety
    /// With the leading dimensions this call resolves to (lda, ldb, ldc):
    /// * for every `(off_a, off_b)` in `offsets`, the M×K row-major block at `a + off_a` with
    ///   row stride lda is readable, and so is the K×N block at `b + off_b` with row stride
    ///   ldb (or, for [`BrgemmB::Packed`], the [`Self::packed_b_len`] elements at `b + off_b`,
    ///   written by a [`super::Transform`] of this context, K and N);
    /// * the M×N row-major block at `c` with row stride ldc is writable (and readable with
    ///   add-C) and overlaps none of the above nor the scratchpad;
    /// * `scratchpad` points at [`Self::scratchpad_size`] writable, initialised bytes (any
    ///   values), aligned to 64, used by no one else during the call.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute_raw(
        &self,
        a: *const A,
        b: *const B,
        offsets: &[(usize, usize)],
        c: *mut A::Acc,
        scratchpad: *mut u8,
        lds: ActualLds,
        post_ops: &PostOps<A::Acc>,
    ) -> Result<()> {
        let checked = self.check_call(offsets, lds, post_ops)?;
        if !(scratchpad as usize).is_multiple_of(SCRATCH_ALIGN) {
            return Err(invalid(format!(
                "brgemm execute_raw: the scratchpad must be aligned to {SCRATCH_ALIGN} bytes"
            )));
        }
        // SAFETY: the caller's contract above, and the O(1) checks just made.
        unsafe { self.run(a, b, offsets, c, scratchpad, checked, post_ops) }
    }

    /// The checks both tiers make: finalized, the batch's length, the leading dimensions,
    /// the bias.
    fn check_call(
        &self,
        offsets: &[(usize, usize)],
        lds: ActualLds,
        post_ops: &PostOps<A::Acc>,
    ) -> Result<(Plan, Lds)> {
        // (Returned together: `run` computes with exactly what was checked.)
        let Dims { n, k, batch, .. } = self.dims;
        let Some(plan) = self.plan else {
            return Err(Error::new(
                ErrorKind::Config,
                "brgemm execute: the object needs a successful finalize() first",
            ));
        };
        if offsets.len() != batch {
            return Err(Error::new(
                ErrorKind::ShapeMismatch,
                format!(
                    "brgemm execute: {} (A, B) offset pairs given, the batch size is {batch}",
                    offsets.len()
                ),
            ));
        }
        let ld = Lds {
            a: pick_ld("lda", self.lda, lds.lda, k)?,
            b: match self.b {
                BrgemmB::Plain(ldb) => pick_ld("ldb", ldb, lds.ldb, n)?,
                BrgemmB::Packed => 0,
            },
            c: pick_ld("ldc", self.ldc, lds.ldc, n)?,
        };
        post_ops.check(n)?;
        Ok((plan, ld))
    }

    /// Packs, runs the kernel over the tiles, merges into C. An `Err` (a block whose index
    /// arithmetic overflows `isize`, impossible for memory that exists) comes before C is
    /// touched.
    ///
    /// # Safety
    /// As [`Self::execute_raw`], with `(plan, ld)` what [`Self::check_call`] returned.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        &self,
        a: *const A,
        b: *const B,
        offsets: &[(usize, usize)],
        c: *mut A::Acc,
        scratchpad: *mut u8,
        (plan, ld): (Plan, Lds),
        post_ops: &PostOps<A::Acc>,
    ) -> Result<()> {
        let Dims { m, n, k, batch } = self.dims;
        let Packed {
            mr,
            nr,
            kp,
            a_panel,
            a_block,
            b_panel,
            b_block,
        } = plan.packed;
        let kernel = &self.kernel;
        let a_packed = scratchpad.cast::<A>();
        let b_packed = scratchpad.wrapping_add(plan.b_at).cast::<B>();
        let plain_b = matches!(self.b, BrgemmB::Plain(_));

        // Pack every A_i (and plain B_i) of the batch.
        for (i, &(off_a, off_b)) in offsets.iter().enumerate() {
            // SAFETY: A_i is a readable M×K block at row stride lda (caller), and lda ≤
            // isize::MAX (checked); `from_raw_parts` checks the extent for overflow.
            let a_i =
                unsafe { MatRef::from_raw_parts(a.wrapping_add(off_a), m, k, ld.a as isize, 1) }?;
            // SAFETY: the scratchpad holds `batch` packed A blocks of `a_block` elements from
            // its start (the plan), aligned, initialised, and this call's alone; `A` is plain
            // data, valid for any bytes.
            let dst = unsafe { std::slice::from_raw_parts_mut(a_packed.add(i * a_block), a_block) };
            layout::pack_a(kernel, &a_i, dst);
            if plain_b {
                // SAFETY: as for A_i: B_i is a readable K×N block at row stride ldb.
                let b_i = unsafe {
                    MatRef::from_raw_parts(b.wrapping_add(off_b), k, n, ld.b as isize, 1)
                }?;
                // SAFETY: the B blocks follow at byte `b_at` (aligned), `batch` of `b_block`
                // elements, within the scratchpad (the plan).
                let dst =
                    unsafe { std::slice::from_raw_parts_mut(b_packed.add(i * b_block), b_block) };
                layout::pack_b(kernel, &b_i, dst);
            }
        }

        let a_of = |i: usize, ip: usize| {
            a_packed
                .cast_const()
                .wrapping_add(i * a_block + ip * a_panel)
        };
        let b_of = |i: usize, jp: usize| {
            if plain_b {
                b_packed
                    .cast_const()
                    .wrapping_add(i * b_block + jp * b_panel)
            } else {
                b.wrapping_add(offsets[i].1 + jp * b_panel)
            }
        };
        let ukr = kernel.ukr();
        // The stack tile, laid out the way the kernel likes C.
        let (rs_t, cs_t) = if kernel.prefers_rows() {
            (nr, 1)
        } else {
            (1, mr)
        };
        let (one, zero) = (<A::Acc as Scalar>::one(), <A::Acc as Element>::zero());
        let plain_post = post_ops.is_identity();
        let mut tile = [const { MaybeUninit::<A::Acc>::uninit() }; MAX_TILE_ELEMS];
        // The kernel's per-thread hardware state (AMX: the tile configuration): set for this
        // call's kernel calls and released when the guard drops, unless the caller holds it
        // with `set_hw_context`, which the guard then leaves alone (`hw_context.rs`).
        let _hw = kernel.enter_hw_context();

        // jr: NR-wide column panels of C (one B panel per batch element, reused across ir).
        for jp in 0..n.div_ceil(nr) {
            let (j0, cols) = (jp * nr, nr.min(n - jp * nr));
            // ir: MR-tall row panels.
            for ip in 0..m.div_ceil(mr) {
                let (r0, rows) = (ip * mr, mr.min(m - ip * mr));
                // The batch reduce: beta 0 for the first element (the tile is not read),
                // 1 after.
                for i in 0..batch {
                    let next = if i + 1 < batch { i + 1 } else { i };
                    let args = GemmUkrArgs {
                        k: kp,
                        alpha: one,
                        a: a_of(i, ip),
                        b: b_of(i, jp),
                        beta: if i == 0 { zero } else { one },
                        c: tile.as_mut_ptr().cast::<A::Acc>(),
                        rs_c: rs_t as isize,
                        cs_c: cs_t as isize,
                        a_next: a_of(next, ip),
                        b_next: b_of(next, jp),
                    };
                    // SAFETY: the A panel holds MR×Kp packed elements (packed above), the B
                    // panel Kp×NR (packed above, or by a Transform: caller); the tile has
                    // MR·NR ≤ MAX_TILE_ELEMS elements (`Cntx::validate`) at these strides,
                    // written by the first call before later ones read it; the context's
                    // kernel runs on this CPU (its configuration was checked).
                    unsafe { ukr(&args) };
                }
                for r in 0..rows {
                    // SAFETY: row r0 + r < M of C, columns j0..j0 + cols ≤ N: inside the
                    // caller's C block, which nothing else references during the call.
                    let c_row = unsafe {
                        std::slice::from_raw_parts_mut(c.add((r0 + r) * ld.c + j0), cols)
                    };
                    for (j, out) in c_row.iter_mut().enumerate() {
                        // SAFETY: the kernel wrote every element of the MR×NR tile.
                        let t = unsafe { tile[r * rs_t + j * cs_t].assume_init() };
                        let x = if self.add_c { *out + t } else { t };
                        *out = if plain_post {
                            x
                        } else {
                            post_ops.apply(x, j0 + j)
                        };
                    }
                }
            }
        }
        Ok(())
    }
}
