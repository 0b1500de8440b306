//! Criterion benchmarks of gemm for regression tracking: square sizes per dtype, column-major
//! NN, single thread, in the configuration the process chose (`BLIS_ARCH_TYPE` forces one).
//! Run: `cargo bench --bench gemm`. Figures and comparisons: `docs/Performance.md`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use oxblis::check::{Rng, Values};
use oxblis::{GemmPair, MatMut, MatRef, Scalar, c32, c64, gemm_ex};

fn bench_dtype<T: Scalar + GemmPair<T>>(c: &mut Criterion, sizes: &[usize]) {
    let mut group = c.benchmark_group(format!("{}gemm_nn_ccc", T::LETTER));
    group.sample_size(10);
    let mut rng = Rng::new(1);
    for &n in sizes {
        let mut a = vec![T::zero(); n * n];
        let mut b = vec![T::zero(); n * n];
        let mut cbuf = vec![T::zero(); n * n];
        rng.fill(Values::Uniform, &mut a);
        rng.fill(Values::Uniform, &mut b);
        let flops_per_fma = if T::IS_COMPLEX { 8 } else { 2 };
        // Criterion reports "elements/s"; with flops as elements, that reads as flop/s.
        group.throughput(Throughput::Elements((flops_per_fma * n * n * n) as u64));
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |bench, &n| {
            let av = MatRef::col_major(&a, n, n, n).unwrap();
            let bv = MatRef::col_major(&b, n, n, n).unwrap();
            bench.iter(|| {
                let mut cv = MatMut::col_major(&mut cbuf, n, n, n).unwrap();
                gemm_ex(&av, &bv, &mut cv, None).unwrap();
            });
        });
    }
    group.finish();
}

fn gemm(c: &mut Criterion) {
    bench_dtype::<f32>(c, &[32, 128, 512]);
    bench_dtype::<f64>(c, &[32, 128, 512]);
    bench_dtype::<c32>(c, &[32, 128, 256]);
    bench_dtype::<c64>(c, &[32, 128, 256]);
}

criterion_group!(benches, gemm);
criterion_main!(benches);
