//! Criterion benchmarks of gemm for regression tracking, in the configuration the process
//! chose (`BLIS_ARCH_TYPE` forces one): square sizes per dtype on one thread (`*gemm_nn_ccc`;
//! `bgemm` is bf16 × bf16 → f32, `igemm` i8 × i8 → i32, `ugemm` u8 × i8 → i32),
//! and 1 against 2 threads on a large square and a k-dominant shape (`threads_*`).
//! Run: `cargo bench --bench gemm`. Figures and comparisons: `docs/Performance.md`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oxblis::check::{Rng, Values};
use oxblis::{Element, GemmPair, MatMut, MatRef, Rntm, Scalar, bf16, c32, c64, gemm_ex};

fn bench_dtype<A: GemmPair<B>, B: Element<Acc = A::Acc>>(c: &mut Criterion, sizes: &[usize]) {
    let mut group = c.benchmark_group(format!("{}gemm_nn_ccc", A::LETTER));
    group.sample_size(10);
    let mut rng = Rng::new(1);
    for &n in sizes {
        let mut a = vec![A::zero(); n * n];
        let mut b = vec![B::zero(); n * n];
        let mut cbuf = vec![<A::Acc as Element>::zero(); n * n];
        rng.fill(Values::Uniform, &mut a);
        rng.fill(Values::Uniform, &mut b);
        let flops_per_fma = if <A::Acc as Scalar>::IS_COMPLEX { 8 } else { 2 };
        // Criterion reports "elements/s"; with flops as elements, that reads as flop/s.
        group.throughput(Throughput::Elements((flops_per_fma * n * n * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, &n| {
            let av = MatRef::col_major(&a, n, n, n).unwrap();
            let bv = MatRef::col_major(&b, n, n, n).unwrap();
            let one = Rntm::new().with_num_threads(1).unwrap();
            bench.iter(|| {
                let mut cv = MatMut::col_major(&mut cbuf, n, n, n).unwrap();
                gemm_ex(&av, &bv, &mut cv, Some(&one)).unwrap();
            });
        });
    }
    group.finish();
}

fn gemm(c: &mut Criterion) {
    bench_dtype::<f32, f32>(c, &[32, 128, 512]);
    bench_dtype::<f64, f64>(c, &[32, 128, 512]);
    bench_dtype::<c32, c32>(c, &[32, 128, 256]);
    bench_dtype::<c64, c64>(c, &[32, 128, 256]);
    bench_dtype::<bf16, bf16>(c, &[32, 128, 512]);
    bench_dtype::<i8, i8>(c, &[32, 128, 512]);
    bench_dtype::<u8, i8>(c, &[32, 128, 512]);
}

/// m×n×k with 1 and 2 threads (automatic ways), column-major NN.
fn bench_threads<T: Scalar + GemmPair<T>>(c: &mut Criterion, (m, n, k): (usize, usize, usize)) {
    let mut group = c.benchmark_group(format!("threads_{}gemm_{m}x{n}x{k}", T::LETTER));
    group.sample_size(10);
    let mut rng = Rng::new(2);
    let mut a = vec![T::zero(); m * k];
    let mut b = vec![T::zero(); k * n];
    let mut cbuf = vec![T::zero(); m * n];
    rng.fill(Values::Uniform, &mut a);
    rng.fill(Values::Uniform, &mut b);
    group.throughput(Throughput::Elements((2 * m * n * k) as u64));
    for threads in [1, 2] {
        let rntm = Rntm::new().with_num_threads(threads).unwrap();
        group.bench_with_input(
            BenchmarkId::from_parameter(threads),
            &rntm,
            |bench, rntm| {
                let av = MatRef::col_major(&a, m, k, m).unwrap();
                let bv = MatRef::col_major(&b, k, n, k).unwrap();
                bench.iter(|| {
                    let mut cv = MatMut::col_major(&mut cbuf, m, n, m).unwrap();
                    gemm_ex(&av, &bv, &mut cv, Some(rntm)).unwrap();
                });
            },
        );
    }
    group.finish();
}

fn threads(c: &mut Criterion) {
    bench_threads::<f32>(c, (1024, 1024, 1024));
    bench_threads::<f64>(c, (1024, 1024, 1024));
    bench_threads::<f32>(c, (64, 64, 100_000));
    bench_threads::<f64>(c, (64, 64, 100_000));
}

criterion_group!(benches, gemm, threads);
criterion_main!(benches);
