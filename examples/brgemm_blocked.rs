//! A blocked gemm built from brgemm calls with runtime leading dimensions: the loop nest a
//! library writes around the ukernel API (`docs/Brgemm.md`).
//!
//! C (m×n) := A (m×k) · B (k×n), all row-major. C is cut into MB×NB blocks; each block is one
//! brgemm whose batch runs over K in KB-deep slices (A_i = A[rows, i·KB..], B_i =
//! B[i·KB.., cols]), plus one add-C brgemm for K's tail. Leading dimensions are runtime, so
//! the same few objects (one per edge shape) serve any matrix. B follows the seed's pattern:
//! packed once by a `Transform` when `pack_type` says the kernel wants it (or always, with
//! `prepack`), passed plain otherwise.
//!
//! ```text
//! cargo run --release --example brgemm_blocked            # check against a reference, exit 1 on mismatch
//! cargo run --release --example brgemm_blocked -- --bench # time against oxblis::gemm, 512³, one thread
//! ```

use std::time::Instant;

use oxblis::ukernel::{
    ActualLds, Brgemm, BrgemmB, BrgemmElement, DataType, Dims, Ld, PackType, Scratchpad, Transform,
    pack_type,
};
use oxblis::{Cntx, Element, GemmPair, MatMut, MatRef, Rntm, bf16, gemm_with_cntx};

/// The pairs this example runs: A × B → `A::Acc` (f32, f64, bf16 → f32, i8 and u8 × i8 → i32).
trait Pair<B: BrgemmElement<Acc = Self::Acc>>: BrgemmElement + GemmPair<B> {}
impl<A: BrgemmElement + GemmPair<B>, B: BrgemmElement<Acc = A::Acc>> Pair<B> for A {}

/// The key of one brgemm object: its block shape, batch and add-C.
type Key = (usize, usize, usize, usize, bool);

/// C := A·B by brgemm calls. `prepack` packs B with a Transform even where the kernel takes
/// plain B.
#[allow(clippy::too_many_arguments)]
fn blocked_gemm<A: Pair<B>, B: BrgemmElement<Acc = A::Acc>>(
    cntx: &Cntx,
    (m, n, k): (usize, usize, usize),
    a: &[A],
    lda: usize,
    b: &[B],
    ldb: usize,
    c: &mut [A::Acc],
    ldc: usize,
    prepack: bool,
) -> oxblis::Result<()>
where
    A::Acc: PartialOrd,
{
    let pt = pack_type(cntx, A::DATA_TYPE, B::DATA_TYPE);
    if pt == PackType::Undef {
        // A real library would fall back to oxblis::gemm (or its own loops) here.
        panic!(
            "brgemm is not available for {:?} × {:?} here",
            A::DATA_TYPE,
            B::DATA_TYPE
        );
    }
    let need_pack = prepack || pt != PackType::NoPack;
    // Blocks: multiples of the kernel's tile, found from a probe object.
    let probe = Brgemm::<A, B>::new(
        cntx,
        Dims {
            m: 1,
            n: 1,
            k: 1,
            batch: 1,
        },
        Ld::Runtime,
        BrgemmB::Plain(Ld::Runtime),
        Ld::Runtime,
    )?
    .expect("pack_type said brgemm is usable");
    let (mr, nr) = probe.tile();
    // Wide column blocks: each execute packs its A_i, so fewer column blocks pack A fewer
    // times (512³ single thread: 8·NR wide ran i8 at 228, 16·NR at 250 G ops/s).
    let (mb, nb) = (4 * mr, 16 * nr);
    let kb = if size_of::<A>() == 1 { 256 } else { 128 };
    let (batch, k_tail) = (k / kb, k % kb);
    let n_blocks = n.div_ceil(nb);

    // B packed once: slot (kblock, nblock) of KB (or tail) × NB (or edge) packed elements.
    let k_blocks = batch + usize::from(k_tail > 0);
    let mut packed = Vec::new();
    let mut packed_at = vec![0usize; k_blocks * n_blocks];
    if need_pack {
        let mut transforms: Vec<((usize, usize), Transform<A, B>)> = Vec::new();
        for kblk in 0..k_blocks {
            let (k0, kk) = (kblk * kb, kb.min(k - kblk * kb));
            for nblk in 0..n_blocks {
                let (j0, nn) = (nblk * nb, nb.min(n - nblk * nb));
                let idx = match transforms.iter().position(|(key, _)| *key == (kk, nn)) {
                    Some(idx) => idx,
                    None => {
                        let tr =
                            Transform::<A, B>::new(cntx, kk, nn, PackType::NoPack, Ld::Runtime)?
                                .expect("pack_type said brgemm is usable");
                        transforms.push(((kk, nn), tr));
                        transforms.len() - 1
                    }
                };
                let tr = &transforms[idx].1;
                let at = packed.len();
                packed.resize(at + tr.out_len(), B::zero());
                tr.execute(&b[k0 * ldb + j0..], Some(ldb), &mut packed[at..])?;
                packed_at[kblk * n_blocks + nblk] = at;
            }
        }
    }

    // One object per (block shape, batch, add-C), built on first use.
    let mut objects: Vec<(Key, Brgemm<A, B>)> = Vec::new();
    let mut scratch = Scratchpad::new(0);
    let mut offsets = Vec::with_capacity(batch.max(1));
    for nblk in 0..n_blocks {
        let (j0, nn) = (nblk * nb, nb.min(n - nblk * nb));
        for i0 in (0..m).step_by(mb) {
            let mm = mb.min(m - i0);
            // The full KB slices, then K's tail added on top.
            for (kk, first, count, add_c) in [(kb, 0, batch, false), (k_tail, batch, 1, batch > 0)]
            {
                if kk == 0 || count == 0 {
                    continue;
                }
                let key = (mm, nn, kk, count, add_c);
                let idx = match objects.iter().position(|(k, _)| *k == key) {
                    Some(idx) => idx,
                    None => {
                        let b_decl = if need_pack {
                            BrgemmB::Packed
                        } else {
                            BrgemmB::Plain(Ld::Runtime)
                        };
                        let dims = Dims {
                            m: mm,
                            n: nn,
                            k: kk,
                            batch: count,
                        };
                        let mut brg =
                            Brgemm::<A, B>::new(cntx, dims, Ld::Runtime, b_decl, Ld::Runtime)?
                                .expect("pack_type said brgemm is usable");
                        brg.set_add_c(add_c);
                        if !brg.finalize() {
                            panic!("brgemm {dims:?} unsupported here: fall back");
                        }
                        scratch.reserve(brg.scratchpad_size());
                        objects.push((key, brg));
                        objects.len() - 1
                    }
                };
                offsets.clear();
                for kblk in first..first + count {
                    let off_a = i0 * lda + kblk * kb;
                    let off_b = if need_pack {
                        packed_at[kblk * n_blocks + nblk]
                    } else {
                        kblk * kb * ldb + j0
                    };
                    offsets.push((off_a, off_b));
                }
                let b_src = if need_pack { &packed[..] } else { b };
                let brg = &objects[idx].1;
                brg.set_hw_context();
                brg.execute(
                    a,
                    b_src,
                    &offsets,
                    &mut c[i0 * ldc + j0..],
                    &mut scratch,
                    ActualLds::new(lda, ldb, ldc),
                )?;
            }
        }
    }
    oxblis::ukernel::release_hw_context();
    Ok(())
}

/// Integer-valued data (exact in every type), small for floats, full range for i8.
fn data<T: BrgemmElement>(len: usize, seed: u64) -> Vec<T> {
    let mut rng = oxblis::check::Rng::new(seed);
    (0..len)
        .map(|_| {
            let x = match T::DATA_TYPE {
                DataType::U8 => rng.below(256) as f64,
                DataType::I8 => rng.below(256) as f64 - 128.0,
                _ => rng.below(9) as f64 - 4.0,
            };
            T::from_parts(x, 0.0)
        })
        .collect()
}

/// Runs the blocked gemm on padded operands and compares with a plain triple loop.
fn check<A: Pair<B>, B: BrgemmElement<Acc = A::Acc>>(
    cntx: &Cntx,
    (m, n, k): (usize, usize, usize),
    prepack: bool,
) -> bool
where
    A::Acc: PartialOrd,
{
    let (lda, ldb, ldc) = (k + 3, n + 1, n + 2);
    let a = data::<A>(m * lda, 1);
    let b = data::<B>(k * ldb, 2);
    let mut c = vec![A::Acc::from_parts(7.0, 0.0); m * ldc];
    if let Err(e) = blocked_gemm(cntx, (m, n, k), &a, lda, &b, ldb, &mut c, ldc, prepack) {
        eprintln!("{}: {e}", cntx.name());
        return false;
    }
    for i in 0..m {
        for j in 0..ldc {
            let want = if j < n {
                (0..k).fold(A::Acc::zero(), |s, p| {
                    s + a[i * lda + p].to_acc() * b[p * ldb + j].to_acc()
                })
            } else {
                A::Acc::from_parts(7.0, 0.0) // padding: untouched
            };
            if c[i * ldc + j] != want {
                eprintln!(
                    "MISMATCH {} {:?} {m}×{n}×{k} prepack {prepack}: C({i}, {j}) = {:?}, want {want:?}",
                    cntx.name(),
                    (A::DATA_TYPE, B::DATA_TYPE),
                    c[i * ldc + j]
                );
                return false;
            }
        }
    }
    true
}

fn check_all() -> bool {
    let shapes = [
        (203, 157, 300),
        (128, 96, 512),
        (1, 1, 1),
        (33, 17, 5),
        (70, 30, 257),
    ];
    let mut ok = true;
    for cntx in oxblis::supported_contexts() {
        for &shape in &shapes {
            for prepack in [false, true] {
                ok &= check::<f32, f32>(cntx, shape, prepack);
                ok &= check::<f64, f64>(cntx, shape, prepack);
                ok &= check::<bf16, bf16>(cntx, shape, prepack);
                ok &= check::<i8, i8>(cntx, shape, prepack);
                ok &= check::<u8, i8>(cntx, shape, prepack);
            }
        }
        println!(
            "{}: blocked brgemm gemm checked (f32, f64, bf16, i8, u8 × i8; {} shapes)",
            cntx.name(),
            shapes.len()
        );
    }
    ok
}

/// Best of `reps` runs of `f`, in seconds.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn bench<T: Pair<T>>(cntx: &Cntx, s: usize)
where
    T::Acc: PartialOrd,
{
    let a = data::<T>(s * s, 1);
    let b = data::<T>(s * s, 2);
    let mut c = vec![T::Acc::zero(); s * s];
    let ops = 2.0 * (s * s * s) as f64 * 1e-9;
    let one = Rntm::new().with_num_threads(1).unwrap();
    let reps = 7;
    let t_gemm = best(reps, || {
        let av = MatRef::row_major(&a, s, s, s).unwrap();
        let bv = MatRef::row_major(&b, s, s, s).unwrap();
        let mut cv = MatMut::row_major(&mut c, s, s, s).unwrap();
        gemm_with_cntx(&av, &bv, &mut cv, cntx, Some(&one)).unwrap();
    });
    let t_brg = best(reps, || {
        blocked_gemm(cntx, (s, s, s), &a, s, &b, s, &mut c, s, false).unwrap()
    });
    let t_pre = best(reps, || {
        blocked_gemm(cntx, (s, s, s), &a, s, &b, s, &mut c, s, true).unwrap()
    });
    println!(
        "{} {:?} {s}³, 1 thread: oxblis::gemm {:.1} G/s | brgemm blocked (seed pattern, pack_type {:?}) {:.1} G/s | brgemm blocked, B always transformed {:.1} G/s",
        cntx.name(),
        T::DATA_TYPE,
        ops / t_gemm,
        pack_type(cntx, T::DATA_TYPE, T::DATA_TYPE),
        ops / t_brg,
        ops / t_pre
    );
}

fn main() {
    if std::env::args().any(|a| a == "--bench") {
        let cntx = oxblis::context().expect("a configuration");
        bench::<f32>(cntx, 512);
        bench::<i8>(cntx, 512);
        return;
    }
    if !check_all() {
        eprintln!("brgemm_blocked: FAILED");
        std::process::exit(1);
    }
    println!("brgemm_blocked: all results match the reference");
}
