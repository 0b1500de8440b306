//! The ukernel (brgemm) API against a plain reference, on every configuration this machine
//! supports: every supported type pair (f32, f64, bf16 → f32, i8 → i32), batch sizes 1…16,
//! add-C on and off, post-ops, fixed, runtime and mixed leading dimensions, B plain or
//! packed by a `Transform` (from plain or transposed input), the `pack_type` answers, and
//! edge sizes around each kernel's MR, NR and k group (1, odd K). Data is integer-valued
//! (i8: the full range), so every result is exact whatever the summation order; one f32 test
//! uses uniform data within a rounding bound. Padding between rows and between blocks holds
//! values that would change the result if read, and C's padding is checked untouched.
//!
//! Also: unsupported requests come back empty / `Undef` / `false`, and bad offsets and
//! leading dimensions come back as errors with C untouched.

mod harness;

use oxblis::check::{Rng, Values, tolerance};
use oxblis::ukernel::{
    ActualLds, Brgemm, BrgemmB, BrgemmElement, DataType, Dims, Ld, PackType, PostOps, Scratchpad,
    Transform, pack_type, release_hw_context,
};
use oxblis::{Cntx, Element, ErrorKind, GemmPair, Scalar, bf16};

/// The element types under test, with how to draw random values: small integers for floats
/// (exact sums), the full range for bytes.
trait Operand: BrgemmElement {
    fn random(rng: &mut Rng) -> Self;
}
impl Operand for f32 {
    fn random(rng: &mut Rng) -> Self {
        rng.value(Values::SmallIntegers)
    }
}
impl Operand for f64 {
    fn random(rng: &mut Rng) -> Self {
        rng.value(Values::SmallIntegers)
    }
}
impl Operand for bf16 {
    fn random(rng: &mut Rng) -> Self {
        rng.value(Values::SmallIntegers)
    }
}
impl Operand for i8 {
    fn random(rng: &mut Rng) -> Self {
        i8::from_parts(rng.below(256) as f64 - 128.0, 0.0)
    }
}
impl Operand for u8 {
    fn random(rng: &mut Rng) -> Self {
        u8::from_parts(rng.below(256) as f64, 0.0)
    }
}

/// A pair the brgemm supports: A × B → `A::Acc` (= `B::Acc`).
trait Pair<B: Operand<Acc = Self::Acc>>: Operand + GemmPair<B>
where
    Self::Acc: PartialOrd,
{
}
impl<A, B> Pair<B> for A
where
    A: Operand + GemmPair<B>,
    B: Operand<Acc = A::Acc>,
    A::Acc: PartialOrd,
{
}

/// How the leading dimensions are declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LdMode {
    /// All fixed at construction.
    Fixed,
    /// All given at execute.
    Runtime,
    /// lda and ldc runtime, ldb fixed.
    Mixed,
}

/// How B reaches the execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BMode {
    Plain,
    /// Packed by a Transform from row-major K×N.
    Packed,
    /// Packed by a Transform from a transposed (N×K row-major) input.
    PackedFromTrans,
}

#[derive(Clone, Copy, Debug)]
struct Case {
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    add_c: bool,
    post_ops: bool,
    lds: LdMode,
    b: BMode,
}

/// A value that changes any result it leaks into (not representable as a small-integer
/// sum; for i8 just a large one).
fn poison<T: Element>() -> T {
    T::from_parts(101.0, 0.0)
}

fn ld_decl(mode: LdMode, which: char, value: usize) -> Ld {
    match (mode, which) {
        (LdMode::Fixed, _) | (LdMode::Mixed, 'b') => Ld::Fixed(value),
        _ => Ld::Runtime,
    }
}

/// Runs one case through the safe tier (and, for odd seeds, the raw tier) and compares every
/// element of C's buffer with the reference.
fn check<A: Pair<B>, B: Operand<Acc = A::Acc>>(cntx: &Cntx, case: Case, seed: u64)
where
    A::Acc: PartialOrd,
{
    let Case {
        m,
        n,
        k,
        batch,
        add_c,
        post_ops,
        lds,
        b: b_mode,
    } = case;
    let mut rng = Rng::new(seed);
    let what = format!(
        "{} {:?}×{:?} {case:?} seed {seed}",
        cntx.name(),
        A::DATA_TYPE,
        B::DATA_TYPE
    );
    // Padded leading dimensions, and blocks placed at scattered offsets in one buffer each
    // (some batch elements share a block: legal and worth checking).
    let (lda, ldb, ldc) = (k + rng.below(3), n + rng.below(3), n + rng.below(3));
    let a_block = (m - 1) * lda + k;
    let b_block = (k - 1) * ldb + n;
    let blocks = batch.div_ceil(2).max(1) + 1;
    let mut a = vec![poison::<A>(); blocks * (a_block + 3) + 5];
    let mut b = vec![poison::<B>(); blocks * (b_block + 3) + 5];
    let a_at = |blk: usize| 5 + blk * (a_block + 3);
    let b_at = |blk: usize| 5 + blk * (b_block + 3);
    for blk in 0..blocks {
        for r in 0..m {
            for p in 0..k {
                a[a_at(blk) + r * lda + p] = A::random(&mut rng);
            }
        }
        for p in 0..k {
            for j in 0..n {
                b[b_at(blk) + p * ldb + j] = B::random(&mut rng);
            }
        }
    }
    let offsets: Vec<(usize, usize)> = (0..batch)
        .map(|_| (a_at(rng.below(blocks)), b_at(rng.below(blocks))))
        .collect();

    // C with padding columns and a tail, all checked afterwards.
    let c_len = (m - 1) * ldc + n + 4;
    let mut c: Vec<A::Acc> = (0..c_len)
        .map(|_| <A::Acc as Element>::from_parts(rng.below(9) as f64 - 4.0, 0.0))
        .collect();
    if !add_c {
        // Not read: anything there must be overwritten.
        for r in 0..m {
            for j in 0..n {
                c[r * ldc + j] = if <A::Acc as Scalar>::UNIT_ROUNDOFF == 0.0 {
                    poison()
                } else {
                    <A::Acc as Element>::from_parts(f64::NAN, 0.0)
                };
            }
        }
    }
    let bias: Vec<A::Acc> = (0..n + 1)
        .map(|_| <A::Acc as Element>::from_parts(rng.below(9) as f64 - 4.0, 0.0))
        .collect();
    let post = if post_ops {
        PostOps {
            scale: Some(<A::Acc as Element>::from_parts(
                if seed.is_multiple_of(2) { 2.0 } else { -1.0 },
                0.0,
            )),
            bias: Some(&bias[..]),
            relu: !seed.is_multiple_of(3),
        }
    } else {
        PostOps::default()
    };

    // The reference: plain sums in the accumulator type (exact for this data).
    let mut want = c.clone();
    for r in 0..m {
        for j in 0..n {
            let mut x = if add_c {
                c[r * ldc + j]
            } else {
                <A::Acc as Element>::zero()
            };
            for &(oa, ob) in &offsets {
                for p in 0..k {
                    x = x + a[oa + r * lda + p].to_acc() * b[ob + p * ldb + j].to_acc();
                }
            }
            if let Some(s) = post.scale {
                x = x * s;
            }
            if let Some(bias) = post.bias {
                x = x + bias[j];
            }
            if post.relu && x < <A::Acc as Element>::zero() {
                x = <A::Acc as Element>::zero();
            }
            want[r * ldc + j] = x;
        }
    }

    // B as the execute takes it.
    let (b_decl, b_exec, b_offsets): (BrgemmB, Vec<B>, Vec<(usize, usize)>) = match b_mode {
        BMode::Plain => (
            BrgemmB::Plain(ld_decl(lds, 'b', ldb)),
            b.clone(),
            offsets.clone(),
        ),
        BMode::Packed | BMode::PackedFromTrans => {
            // Pack each batch element's B_i into its own slot of one buffer, slots in
            // reverse order, through a Transform with a runtime input ld.
            let input = if b_mode == BMode::Packed {
                PackType::NoPack
            } else {
                PackType::Trans
            };
            let tr = Transform::<A, B>::new(cntx, k, n, input, Ld::Runtime)
                .unwrap()
                .unwrap_or_else(|| panic!("{what}: no transform"));
            let len = tr.out_len();
            let mut packed = vec![poison::<B>(); batch * len + 7];
            let mut offs = offsets.clone();
            for (i, off) in offs.iter_mut().enumerate() {
                let slot = 7 + (batch - 1 - i) * len;
                if b_mode == BMode::Packed {
                    tr.execute(&b[off.1..], Some(ldb), &mut packed[slot..])
                        .unwrap();
                } else {
                    // Bᵀ stored N×K row-major with ld K + 1.
                    let ldt = k + 1;
                    let mut bt = vec![poison::<B>(); n * ldt];
                    for p in 0..k {
                        for j in 0..n {
                            bt[j * ldt + p] = b[off.1 + p * ldb + j];
                        }
                    }
                    tr.execute(&bt, Some(ldt), &mut packed[slot..]).unwrap();
                }
                off.1 = slot;
            }
            (BrgemmB::Packed, packed, offs)
        }
    };

    let dims = Dims { m, n, k, batch };
    let mut brg = Brgemm::<A, B>::new(
        cntx,
        dims,
        ld_decl(lds, 'a', lda),
        b_decl,
        ld_decl(lds, 'c', ldc),
    )
    .unwrap()
    .unwrap_or_else(|| panic!("{what}: empty brgemm"));
    brg.set_add_c(add_c);
    assert!(brg.finalize(), "{what}: finalize failed");
    let actual = match lds {
        LdMode::Fixed => ActualLds::FIXED,
        LdMode::Runtime => ActualLds::new(lda, ldb, ldc),
        // ldb is fixed: giving the same value is allowed, so give it.
        LdMode::Mixed => ActualLds::new(lda, ldb, ldc),
    };
    let mut scratch = Scratchpad::new(brg.scratchpad_size());
    brg.set_hw_context();
    if seed % 2 == 1 {
        // A dirty scratchpad (all bits set: NaN for floats) must not leak into C: packing
        // writes every element the kernel reads, zero padding included.
        // SAFETY: the scratchpad owns `len()` writable bytes.
        unsafe { std::ptr::write_bytes(scratch.as_mut_ptr(), 0xff, scratch.len()) };
        // SAFETY: every block lies in its buffer (built above), C is a separate buffer and the
        // scratchpad is owned and large enough.
        unsafe {
            brg.execute_raw(
                a.as_ptr(),
                b_exec.as_ptr(),
                &b_offsets,
                c.as_mut_ptr(),
                scratch.as_mut_ptr(),
                actual,
                &post,
            )
        }
        .unwrap();
    } else {
        brg.execute_post_ops(&a, &b_exec, &b_offsets, &mut c, &mut scratch, actual, &post)
            .unwrap();
    }
    release_hw_context();
    for (idx, (got, want)) in c.iter().zip(&want).enumerate() {
        assert!(
            harness::bits_equal(*got, *want),
            "{what}: C[{idx}] (row {}, col {}) is {got:?}, want {want:?}",
            idx / ldc,
            idx % ldc
        );
    }
}

fn contexts() -> Vec<Cntx> {
    harness::contexts_with_tiny_blocks()
        .into_iter()
        .map(|(cntx, _)| cntx)
        .collect()
}

/// Contexts whose bf16, i8 and u8 × i8 entries are the model-backed AMX kernels
/// (`kernels/sapphirerapids`, an exact software model of the tile unit, so they run on any
/// x86-64): 32×32 tiles, A grouped by a whole tile row (32 bf16, 64 bytes of k), B by pairs
/// or quads, and a per-thread hardware context without which the model faults (a panic).
/// They cover what no CPU here has: separate A and B k groups, and the hardware context.
#[cfg(target_arch = "x86_64")]
fn amx_model_contexts() -> Vec<Cntx> {
    use oxblis::kernels::sapphirerapids::{
        AMX_MODEL_CONTEXT, gemm_b16_amx_32x32_model, gemm_i8_amx_32x32_model,
        gemm_u8i8_amx_32x32_model,
    };
    use oxblis::{Blocksizes, GemmKernel};
    let bs = Blocksizes {
        mr: 32,
        nr: 32,
        kc: 64,
        mc: 64,
        nc: 64,
    };
    // SAFETY: the model kernels implement the kernel contract for 32×32 tiles in these
    // k-grouped layouts, with the model's per-thread context, on any x86-64.
    let (b16, i8i8, u8i8) = unsafe {
        (
            GemmKernel::<bf16, bf16>::new(
                "amx_model_b16_32x32",
                gemm_b16_amx_32x32_model,
                true,
                bs,
            )
            .with_k_groups(32, 2)
            .with_hw_context(AMX_MODEL_CONTEXT),
            GemmKernel::<i8, i8>::new("amx_model_i8_32x32", gemm_i8_amx_32x32_model, true, bs)
                .with_k_groups(64, 4)
                .with_hw_context(AMX_MODEL_CONTEXT),
            GemmKernel::<u8, i8>::new("amx_model_u8i8_32x32", gemm_u8i8_amx_32x32_model, true, bs)
                .with_k_groups(64, 4)
                .with_hw_context(AMX_MODEL_CONTEXT),
        )
    };
    let base = oxblis::supported_contexts()[0].clone();
    let cntx = base
        .with_kernel(b16)
        .and_then(|c| c.with_kernel(i8i8))
        .and_then(|c| c.with_kernel(u8i8))
        .unwrap();
    vec![cntx]
}

#[cfg(not(target_arch = "x86_64"))]
fn amx_model_contexts() -> Vec<Cntx> {
    Vec::new()
}

const LD_MODES: [LdMode; 3] = [LdMode::Fixed, LdMode::Runtime, LdMode::Mixed];
const B_MODES: [BMode; 3] = [BMode::Plain, BMode::Packed, BMode::PackedFromTrans];

/// The grid for one type on every configuration: batch 1…16 with shapes and options cycling;
/// every combination of add-C × post-ops × ld mode × B mode at an edge shape; and sizes
/// around the kernel's MR, NR and k group.
fn grid<A: Pair<B>, B: Operand<Acc = A::Acc>>()
where
    A::Acc: PartialOrd,
{
    grid_on::<A, B>(&contexts());
}

fn grid_on<A: Pair<B>, B: Operand<Acc = A::Acc>>(contexts: &[Cntx])
where
    A::Acc: PartialOrd,
{
    for cntx in contexts {
        let cntx = cntx.clone();
        let kernel = cntx.kernel::<A, B>();
        let bs = kernel.blocksizes();
        let (mr, nr, g) = (bs.mr, bs.nr, kernel.k_group());
        let mut seed = 0;
        let mut next = || {
            seed += 1;
            seed
        };
        // Batch sizes 1…16.
        for batch in 1..=16 {
            for (s, &(m, n, k)) in [(mr, nr, 2 * g + 1), (mr + 1, nr - 1, 3), (5, 7, 16)]
                .iter()
                .enumerate()
            {
                let i = batch + s;
                let case = Case {
                    m,
                    n,
                    k,
                    batch,
                    add_c: i % 2 == 0,
                    post_ops: i % 3 == 0,
                    lds: LD_MODES[i % 3],
                    b: B_MODES[(i / 3) % 3],
                };
                check::<A, B>(&cntx, case, next());
            }
        }
        // Every option combination.
        for add_c in [false, true] {
            for post_ops in [false, true] {
                for lds in LD_MODES {
                    for b in B_MODES {
                        let case = Case {
                            m: mr + 1,
                            n: nr + 1,
                            k: 5,
                            batch: 3,
                            add_c,
                            post_ops,
                            lds,
                            b,
                        };
                        check::<A, B>(&cntx, case, next());
                    }
                }
            }
        }
        // Edge sizes: around MR and NR, 1, and K around the k group (odd K included).
        let ms = [1, mr - 1, mr, mr + 1, 2 * mr + 3];
        let ns = [1, nr - 1, nr, nr + 1];
        let ks = [1, 2, g + 1, 2 * g - 1, 7, 4 * g + 3];
        for (x, &m) in ms.iter().enumerate() {
            for (y, &n) in ns.iter().enumerate() {
                for (z, &k) in ks.iter().enumerate() {
                    if m == 0 || n == 0 || k == 0 {
                        continue;
                    }
                    let i = x + y + z;
                    let case = Case {
                        m,
                        n,
                        k,
                        batch: 1 + i % 4,
                        add_c: i % 2 == 1,
                        post_ops: i % 4 == 1,
                        lds: LD_MODES[i % 3],
                        b: B_MODES[(x + z) % 3],
                    };
                    check::<A, B>(&cntx, case, next());
                }
            }
        }
    }
}

#[test]
fn f32_matches_the_reference() {
    grid::<f32, f32>();
}

#[test]
fn f64_matches_the_reference() {
    grid::<f64, f64>();
}

#[test]
fn bf16_matches_the_reference() {
    grid::<bf16, bf16>();
}

#[test]
fn i8_matches_the_reference() {
    grid::<i8, i8>();
}

#[test]
fn u8_i8_matches_the_reference() {
    grid::<u8, i8>();
}

#[test]
fn amx_model_kernels_match_the_reference() {
    let contexts = amx_model_contexts();
    grid_on::<bf16, bf16>(&contexts);
    grid_on::<i8, i8>(&contexts);
    grid_on::<u8, i8>(&contexts);
}

#[test]
fn f32_uniform_data_within_the_rounding_bound() {
    for cntx in contexts() {
        let (m, n, k, batch) = (37, 29, 41, 6);
        let mut rng = Rng::new(7);
        let mut a = vec![0.0f32; batch * m * k];
        let mut b = vec![0.0f32; batch * k * n];
        rng.fill(Values::Uniform, &mut a);
        rng.fill(Values::Uniform, &mut b);
        let offsets: Vec<_> = (0..batch).map(|i| (i * m * k, i * k * n)).collect();
        let dims = Dims { m, n, k, batch };
        let mut brg = Brgemm::<f32, f32>::new(
            &cntx,
            dims,
            Ld::Runtime,
            BrgemmB::Plain(Ld::Runtime),
            Ld::Runtime,
        )
        .unwrap()
        .unwrap();
        assert!(brg.finalize());
        let mut scratch = Scratchpad::new(brg.scratchpad_size());
        let mut c = vec![f32::NAN; m * n];
        brg.execute(
            &a,
            &b,
            &offsets,
            &mut c,
            &mut scratch,
            ActualLds::new(k, n, n),
        )
        .unwrap();
        for r in 0..m {
            for j in 0..n {
                let (mut sum, mut mag) = (0.0f64, 0.0f64);
                for i in 0..batch {
                    for p in 0..k {
                        let x = f64::from(a[i * m * k + r * k + p])
                            * f64::from(b[i * k * n + p * n + j]);
                        sum += x;
                        mag += x.abs();
                    }
                }
                let err = (f64::from(c[r * n + j]) - sum).abs();
                assert!(
                    err <= tolerance::<f32>(k * batch, mag),
                    "{} ({r}, {j}): {} against {sum}",
                    cntx.name(),
                    c[r * n + j]
                );
            }
        }
    }
}

#[test]
fn pack_type_answers_from_the_kernel_that_runs() {
    fn expect<A: Pair<B>, B: Operand<Acc = A::Acc>>(cntx: &Cntx) -> PackType
    where
        A::Acc: PartialOrd,
    {
        let want = if cntx.kernel::<A, B>().k_groups().1 > 1 {
            PackType::Pack32
        } else {
            PackType::NoPack
        };
        let dims = Dims {
            m: 2,
            n: 2,
            k: 2,
            batch: 1,
        };
        let brg = Brgemm::<A, B>::new(
            cntx,
            dims,
            Ld::Runtime,
            BrgemmB::Plain(Ld::Runtime),
            Ld::Runtime,
        )
        .unwrap()
        .unwrap();
        assert_eq!(brg.b_pack_type(), want, "{}", cntx.name());
        assert_eq!(
            pack_type(cntx, A::DATA_TYPE, B::DATA_TYPE),
            want,
            "{}",
            cntx.name()
        );
        want
    }
    use DataType::*;
    for cntx in contexts().iter().chain(&amx_model_contexts()) {
        let name = cntx.name();
        // Plain kernels take plain B.
        assert_eq!(expect::<f32, f32>(cntx), PackType::NoPack, "{name}");
        assert_eq!(expect::<f64, f64>(cntx), PackType::NoPack, "{name}");
        expect::<bf16, bf16>(cntx);
        expect::<i8, i8>(cntx);
        expect::<u8, i8>(cntx);
        // No such pairs: the caller must fall back.
        for (a, b) in [
            (F32, Bf16),
            (Bf16, F32),
            (F64, F32),
            (I8, Bf16),
            (I8, U8),
            (U8, U8),
        ] {
            assert_eq!(pack_type(cntx, a, b), PackType::Undef, "{name} {a:?}×{b:?}");
        }
    }
    // On skx with VNNI / AVX512_BF16 the low-precision kernels read k-grouped B, and so do
    // the AMX kernels (pairs / quads of k), whose A groups are a whole tile row.
    let mut grouped = 0;
    if let Some(skx) = oxblis::supported_contexts()
        .into_iter()
        .find(|c| c.name() == "skx")
    {
        for (dt, g) in [
            (I8, skx.kernel::<i8, i8>().k_group()),
            (Bf16, skx.kernel::<bf16, bf16>().k_group()),
        ] {
            if g > 1 {
                assert_eq!(pack_type(skx, dt, dt), PackType::Pack32);
                grouped += 1;
            } else {
                eprintln!("skx {dt:?} kernel reads plain B here (CPU without VNNI/BF16)");
            }
        }
    }
    for cntx in amx_model_contexts() {
        assert_eq!(pack_type(&cntx, Bf16, Bf16), PackType::Pack32);
        assert_eq!(pack_type(&cntx, I8, I8), PackType::Pack32);
        assert_eq!(pack_type(&cntx, U8, I8), PackType::Pack32);
        grouped += 3;
    }
    assert!(grouped >= 3, "the Pack32 path was not exercised");
}

#[test]
fn unsupported_requests_come_back_empty_or_false() {
    let cntx = oxblis::context().unwrap();
    // Sizes whose scratchpad overflows: constructed fine, but finalize says no.
    let dims = Dims {
        m: 1 << 20,
        n: 4,
        k: 1 << 30,
        batch: 1 << 20,
    };
    let mut brg = Brgemm::<f32, f32>::new(
        cntx,
        dims,
        Ld::Runtime,
        BrgemmB::Plain(Ld::Runtime),
        Ld::Runtime,
    )
    .unwrap()
    .unwrap();
    assert!(!brg.finalize());
    assert_eq!(brg.scratchpad_size(), 0);
    // An execute without a successful finalize is an error, not a panic.
    let mut scratch = Scratchpad::new(0);
    let mut c = [0.0f32; 4];
    let err = brg
        .execute(&[], &[], &[(0, 0)], &mut c, &mut scratch, ActualLds::FIXED)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
    // A Transform asked for a layout that is not an input layout.
    let err = Transform::<f32, f32>::new(cntx, 4, 4, PackType::Pack32, Ld::Fixed(4)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidView);
    // The pairs without a brgemm answer Undef (see pack_type_answers_from_the_kernel_that_runs).
    assert_eq!(pack_type(cntx, DataType::I8, DataType::U8), PackType::Undef);
}

/// A small valid f32 setup for the error tests: 3×4×5, batch 2, runtime lds.
struct Setup {
    brg: Brgemm<f32, f32>,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
    scratch: Scratchpad,
}

fn setup(b: BrgemmB) -> Setup {
    let cntx = oxblis::context().unwrap();
    let dims = Dims {
        m: 3,
        n: 4,
        k: 5,
        batch: 2,
    };
    let mut brg = Brgemm::<f32, f32>::new(cntx, dims, Ld::Runtime, b, Ld::Runtime)
        .unwrap()
        .unwrap();
    assert!(brg.finalize());
    let scratch = Scratchpad::new(brg.scratchpad_size());
    Setup {
        brg,
        a: vec![1.0; 2 * 15],
        b: vec![1.0; 2 * 20],
        c: vec![7.0; 12],
        scratch,
    }
}

#[test]
fn bad_offsets_and_leading_dimensions_are_errors_and_leave_c_alone() {
    let good = ActualLds::new(5, 4, 4);
    let offsets = [(0, 0), (15, 20)];
    let kind = |s: &mut Setup, offsets: &[(usize, usize)], lds: ActualLds| {
        let r = s
            .brg
            .execute(&s.a, &s.b, offsets, &mut s.c, &mut s.scratch, lds);
        if r.is_err() {
            assert!(s.c.iter().all(|&x| x == 7.0), "C written by a failing call");
        }
        r.err().map(|e| {
            assert!(!e.message().is_empty());
            e.kind()
        })
    };
    let mut s = setup(BrgemmB::Plain(Ld::Runtime));
    assert_eq!(kind(&mut s, &offsets, good), None);
    s.c.fill(7.0);
    // A block past the end of A, of B; an offset that overflows.
    assert_eq!(
        kind(&mut s, &[(0, 0), (16, 20)], good),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &[(0, 0), (15, 21)], good),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &[(usize::MAX, 0), (0, 0)], good),
        Some(ErrorKind::InvalidView)
    );
    // Wrong batch length.
    assert_eq!(
        kind(&mut s, &offsets[..1], good),
        Some(ErrorKind::ShapeMismatch)
    );
    // Leading dimensions: missing, too small, too large for the buffers, overflowing.
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::FIXED),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::new(4, 4, 4)),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::new(5, 3, 4)),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::new(6, 4, 4)),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::new(5, 4, 5)),
        Some(ErrorKind::InvalidView)
    );
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::new(usize::MAX, 4, 4)),
        Some(ErrorKind::InvalidView)
    );
    // C too short.
    let r = s
        .brg
        .execute(&s.a, &s.b, &offsets, &mut s.c[..11], &mut s.scratch, good);
    assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidView);
    // Scratchpad too small.
    let mut small = Scratchpad::new(s.brg.scratchpad_size() - 64);
    let r = s
        .brg
        .execute(&s.a, &s.b, &offsets, &mut s.c, &mut small, good);
    assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidView);
    // A bias shorter than N.
    let bias = [1.0f32; 3];
    let post = PostOps {
        scale: None,
        bias: Some(&bias[..]),
        relu: false,
    };
    let r = s
        .brg
        .execute_post_ops(&s.a, &s.b, &offsets, &mut s.c, &mut s.scratch, good, &post);
    assert_eq!(r.unwrap_err().kind(), ErrorKind::ShapeMismatch);
    assert!(s.c.iter().all(|&x| x == 7.0));

    // Packed B: the block after the offset must hold a whole packed B.
    let mut s = setup(BrgemmB::Packed);
    let len = s.brg.packed_b_len();
    s.b = vec![1.0; 2 * len];
    assert_eq!(kind(&mut s, &[(0, 0), (15, len)], good), None);
    s.c.fill(7.0);
    assert_eq!(
        kind(&mut s, &[(0, 0), (15, len + 1)], good),
        Some(ErrorKind::InvalidView)
    );

    // Fixed leading dimensions: a conflicting actual value is an error, the same is fine.
    let cntx = oxblis::context().unwrap();
    let dims = Dims {
        m: 3,
        n: 4,
        k: 5,
        batch: 2,
    };
    let mut fixed = Brgemm::<f32, f32>::new(
        cntx,
        dims,
        Ld::Fixed(5),
        BrgemmB::Plain(Ld::Fixed(4)),
        Ld::Fixed(4),
    )
    .unwrap()
    .unwrap();
    assert!(fixed.finalize());
    let mut s = setup(BrgemmB::Plain(Ld::Runtime));
    s.brg = fixed;
    assert_eq!(kind(&mut s, &offsets, ActualLds::new(5, 4, 4)), None);
    s.c.fill(7.0);
    assert_eq!(
        kind(&mut s, &offsets, ActualLds::new(6, 4, 4)),
        Some(ErrorKind::InvalidView)
    );

    // Construction: zero sizes and fixed leading dimensions shorter than a row.
    let new = |dims: Dims, lda: usize, ldb: usize, ldc: usize| {
        Brgemm::<f32, f32>::new(
            cntx,
            dims,
            Ld::Fixed(lda),
            BrgemmB::Plain(Ld::Fixed(ldb)),
            Ld::Fixed(ldc),
        )
        .map(|_| ())
        .unwrap_err()
        .kind()
    };
    assert_eq!(new(Dims { m: 0, ..dims }, 5, 4, 4), ErrorKind::InvalidView);
    assert_eq!(
        new(Dims { batch: 0, ..dims }, 5, 4, 4),
        ErrorKind::InvalidView
    );
    assert_eq!(new(dims, 4, 4, 4), ErrorKind::InvalidView);
    assert_eq!(new(dims, 5, 3, 4), ErrorKind::InvalidView);
    assert_eq!(new(dims, 5, 4, 3), ErrorKind::InvalidView);

    // Transform: input outside its slice, short output, missing runtime ld.
    let tr = Transform::<f32, f32>::new(cntx, 5, 4, PackType::NoPack, Ld::Runtime)
        .unwrap()
        .unwrap();
    let mut out = vec![0.0f32; tr.out_len()];
    let input = vec![1.0f32; 20];
    assert!(tr.execute(&input, Some(4), &mut out).is_ok());
    assert_eq!(
        tr.execute(&input, Some(5), &mut out).unwrap_err().kind(),
        ErrorKind::InvalidView
    );
    assert_eq!(
        tr.execute(&input, None, &mut out).unwrap_err().kind(),
        ErrorKind::InvalidView
    );
    let short = tr.out_len() - 1;
    assert_eq!(
        tr.execute(&input, Some(4), &mut out[..short])
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidView
    );
}

#[test]
fn objects_can_be_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Brgemm<f32, f32>>();
    send_sync::<Brgemm<i8, i8>>();
    send_sync::<Transform<bf16, bf16>>();
    send_sync::<Scratchpad>();
    // One object, two threads, each with its own scratchpad and C.
    let cntx = oxblis::context().unwrap();
    let dims = Dims {
        m: 9,
        n: 7,
        k: 5,
        batch: 3,
    };
    let mut brg = Brgemm::<f32, f32>::new(
        cntx,
        dims,
        Ld::Fixed(5),
        BrgemmB::Plain(Ld::Fixed(7)),
        Ld::Fixed(7),
    )
    .unwrap()
    .unwrap();
    assert!(brg.finalize());
    let a = vec![1.0f32; 3 * 45];
    let b = vec![2.0f32; 3 * 35];
    let offsets = [(0, 0), (45, 35), (90, 70)];
    let results: Vec<Vec<f32>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut scratch = Scratchpad::new(brg.scratchpad_size());
                    let mut c = vec![0.0f32; 63];
                    brg.execute(&a, &b, &offsets, &mut c, &mut scratch, ActualLds::FIXED)
                        .unwrap();
                    c
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for c in results {
        assert!(c.iter().all(|&x| x == 30.0));
    }
}

/// `set_hw_context` keeps the kernel's hardware state (the model's tile configuration) set
/// across executes and across a gemm call with the same kernel, until `release_hw_context`;
/// without it every execute releases its own. Results agree either way.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_held_hardware_context_survives_executes_and_gemm_calls_until_released() {
    use oxblis::kernels::sapphirerapids::TileModel;
    use oxblis::{MatMut, MatRef, gemm_with_cntx};
    // A fresh thread: the model's state is per thread.
    std::thread::spawn(|| {
        let cntx = &amx_model_contexts()[0];
        let (m, n, k, batch) = (33, 40, 70, 3);
        let a: Vec<bf16> = (0..batch * m * k)
            .map(|x| bf16::from_f32((x % 5) as f32 - 2.0))
            .collect();
        let b: Vec<bf16> = (0..batch * k * n)
            .map(|x| bf16::from_f32((x % 7) as f32 - 3.0))
            .collect();
        let offsets: Vec<_> = (0..batch).map(|i| (i * m * k, i * k * n)).collect();
        let dims = Dims { m, n, k, batch };
        let mut brg = Brgemm::<bf16, bf16>::new(
            cntx,
            dims,
            Ld::Fixed(k),
            BrgemmB::Plain(Ld::Fixed(n)),
            Ld::Fixed(n),
        )
        .unwrap()
        .unwrap();
        assert!(brg.finalize());
        let mut scratch = Scratchpad::new(brg.scratchpad_size());
        let run = |brg: &Brgemm<bf16, bf16>, scratch: &mut Scratchpad| {
            let mut c = vec![f32::NAN; m * n];
            brg.execute(&a, &b, &offsets, &mut c, scratch, ActualLds::FIXED)
                .unwrap();
            c
        };
        let unheld = run(&brg, &mut scratch);
        assert!(
            TileModel::config().is_none(),
            "an execute releases its own configuration"
        );

        brg.set_hw_context();
        assert!(
            TileModel::config().is_some(),
            "set_hw_context configures the tiles"
        );
        assert_eq!(run(&brg, &mut scratch), unheld);
        assert!(
            TileModel::config().is_some(),
            "a held configuration survives an execute"
        );
        // A gemm call with the same kernel state leaves it set too.
        let sq: Vec<bf16> = (0..64 * 64)
            .map(|x| bf16::from_f32((x % 3) as f32))
            .collect();
        let mut c = vec![0.0f32; 64 * 64];
        let av = MatRef::col_major(&sq, 64, 64, 64).unwrap();
        gemm_with_cntx(
            &av,
            &av,
            &mut MatMut::col_major(&mut c, 64, 64, 64).unwrap(),
            cntx,
            None,
        )
        .unwrap();
        assert!(
            TileModel::config().is_some(),
            "a held configuration survives a gemm call"
        );
        assert_eq!(run(&brg, &mut scratch), unheld);

        release_hw_context();
        assert!(
            TileModel::config().is_none(),
            "release_hw_context releases it"
        );
        release_hw_context(); // twice is harmless
    })
    .join()
    .unwrap();
}
