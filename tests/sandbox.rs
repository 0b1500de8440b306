//! Which implementation computes gemm: with a `sandbox-<name>` feature, the runtime report
//! names that sandbox and its call counter moves with every call it computes, so the other
//! test suites, run with the feature, really test the sandbox; without one, nothing is
//! routed anywhere. (`.ci/run` runs every suite in all three builds.)

use oxblis::{MatMut, MatRef, Rntm, gemm, gemm_ex, runtime_report};

fn expected() -> Option<&'static str> {
    if cfg!(feature = "sandbox-ref99") {
        Some("ref99")
    } else if cfg!(feature = "sandbox-gemmlike") {
        Some("gemmlike")
    } else {
        None
    }
}

#[test]
fn the_enabled_sandbox_computes_the_calls() {
    let before = runtime_report().sandbox_calls;
    let a: Vec<f64> = (0..40 * 30).map(|x| (x % 7) as f64).collect();
    let b: Vec<f64> = (0..30 * 20).map(|x| (x % 5) as f64).collect();
    let mut c = vec![0.0; 40 * 20];
    let av = MatRef::col_major(&a, 40, 30, 40).unwrap();
    let bv = MatRef::col_major(&b, 30, 20, 30).unwrap();
    gemm(
        1.0,
        &av,
        &bv,
        0.0,
        &mut MatMut::col_major(&mut c, 40, 20, 40).unwrap(),
    )
    .unwrap();
    let rntm = Rntm::new().with_num_threads(2).unwrap();
    gemm_ex(
        &av,
        &bv,
        &mut MatMut::col_major(&mut c, 40, 20, 40).unwrap(),
        Some(&rntm),
    )
    .unwrap();
    for j in 0..20 {
        for i in 0..40 {
            let want: f64 = (0..30).map(|p| a[i + p * 40] * b[p + j * 30]).sum();
            assert_eq!(c[i + j * 40], want);
        }
    }
    let report = runtime_report();
    assert_eq!(report.sandbox, expected());
    let shown = format!("{report}");
    match expected() {
        Some(name) => {
            // Other tests in this process may call too: at least these two went through it.
            assert!(
                report.sandbox_calls >= before + 2,
                "{} → {}",
                before,
                report.sandbox_calls
            );
            assert!(
                shown.contains(&format!("sandbox        : {name}")),
                "{shown}"
            );
        }
        None => {
            assert_eq!(report.sandbox_calls, 0);
            assert!(shown.contains("sandbox        : none"), "{shown}");
        }
    }
}

#[test]
fn declined_calls_fall_back_to_the_native_implementation() {
    // alpha = 0 is declined by both sandboxes: C is still scaled by beta, A is not read.
    let a = vec![f32::NAN; 9];
    let mut c = vec![2.0f32; 9];
    let av = MatRef::col_major(&a, 3, 3, 3).unwrap();
    gemm(
        0.0,
        &av,
        &av,
        3.0,
        &mut MatMut::col_major(&mut c, 3, 3, 3).unwrap(),
    )
    .unwrap();
    assert!(c.iter().all(|&x| x == 6.0));
}
