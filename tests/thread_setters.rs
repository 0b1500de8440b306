//! The global thread setters: validated, visible to later calls, and safe to use while other
//! threads call gemm (its own test binary, since it changes process-wide state).

use oxblis::{
    ErrorKind, MatMut, MatRef, Threading, Ways, gemm_ex, set_num_threads, set_ways, thread_defaults,
};

#[test]
fn setters_validate_and_apply_while_calls_run() {
    set_num_threads(3).unwrap();
    assert_eq!(thread_defaults(), Threading::Total(3));
    let ways = Ways {
        jc: 1,
        pc: 1,
        ic: 2,
        jr: 1,
        ir: 1,
    };
    set_ways(ways).unwrap();
    assert_eq!(thread_defaults(), Threading::Ways(ways));
    assert_eq!(
        set_num_threads(0).unwrap_err().kind(),
        ErrorKind::InvalidRntm
    );
    assert_eq!(
        thread_defaults(),
        Threading::Ways(ways),
        "a refused setting changes nothing"
    );

    let n = 80;
    let a: Vec<f64> = (0..n * n).map(|x| (x % 11) as f64).collect();
    let want: Vec<f64> = (0..n * n)
        .map(|idx| {
            (0..n)
                .map(|p| a[idx % n + p * n] * a[p + idx / n * n])
                .sum()
        })
        .collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..200 {
                set_num_threads(1 + i % 4).unwrap();
                let w = Ways {
                    jc: 1,
                    pc: 1 + i % 2,
                    ic: 1,
                    jr: 2,
                    ir: 1,
                };
                set_ways(w).unwrap();
            }
        });
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    let mut c = vec![0.0; n * n];
                    let av = MatRef::col_major(&a, n, n, n).unwrap();
                    gemm_ex(
                        &av,
                        &av,
                        &mut MatMut::col_major(&mut c, n, n, n).unwrap(),
                        None,
                    )
                    .unwrap();
                    assert_eq!(c, want);
                }
            });
        }
    });
}
