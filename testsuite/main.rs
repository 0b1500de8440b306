//! The oxblis testsuite (in the style of BLIS's): runs gemm over dtypes × op(A), op(B) ×
//! storage of C, A and B × a size ladder, on every configuration this CPU supports (or the
//! one `--config` names), checks each result against the reference, and prints one line per
//! test and a summary. Exits 1 on any FAIL, 2 on bad usage or configuration errors.
//!
//! Still small: input files, thread layouts, the concurrent mode and machine-readable
//! output arrive with issue #6. `docs/Testsuite.md` will describe it then.

use std::process::ExitCode;
use std::time::Instant;

use oxblis::check::{Op, Rng, Storage, TestMatrix, Values, compare, gemm_reference};
use oxblis::{Cntx, GemmPair, Scalar, c32, c64, gemm_with_cntx};

const USAGE: &str = "usage: testsuite [--info] [--config NAME] [--quick]
  --info         print the runtime report (build baseline, CPU features, configurations,
                 the chosen one and its blocksizes) and exit
  --config NAME  test only configuration NAME (default: every one this CPU supports)
  --quick        a shorter size ladder";

/// Residuals (in units of the rounding-error bound) up to this are PASS.
const PASS_LIMIT: f64 = 1.0;
/// Up to this MARGINAL; beyond, FAIL.
const MARGINAL_LIMIT: f64 = 10.0;

struct Options {
    info: bool,
    config: Option<String>,
    quick: bool,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut opts = Options {
        info: false,
        config: None,
        quick: false,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--info" => opts.info = true,
            "--quick" => opts.quick = true,
            "--config" => {
                opts.config = Some(args.next().ok_or("--config needs a configuration name")?)
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(opts)
}

#[derive(Default)]
struct Tally {
    pass: usize,
    marginal: usize,
    fail: usize,
}

fn main() -> ExitCode {
    let opts = match parse(std::env::args().skip(1)) {
        Ok(opts) => opts,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("testsuite: {why}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let report = oxblis::runtime_report();
    if opts.info {
        print!("{report}");
        return if report.chosen.is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(2)
        };
    }
    // The process-wide choice must be sound even when --config overrides it: a bad
    // BLIS_ARCH_TYPE is an error either way.
    if let Err(e) = oxblis::context() {
        eprintln!("testsuite: {e}");
        return ExitCode::from(2);
    }
    let contexts = match &opts.config {
        Some(name) => match oxblis::context_named(name) {
            Ok(cntx) => vec![cntx],
            Err(e) => {
                eprintln!("testsuite: {e}");
                return ExitCode::from(2);
            }
        },
        None => oxblis::supported_contexts(),
    };
    let sizes: &[usize] = if opts.quick {
        &[1, 7, 33]
    } else {
        &[1, 7, 33, 100, 160]
    };
    let start = Instant::now();
    let mut tally = Tally::default();
    for cntx in &contexts {
        println!("configuration {}", cntx.name());
        run_dtype::<f32>(cntx, sizes, &mut tally);
        run_dtype::<f64>(cntx, sizes, &mut tally);
        run_dtype::<c32>(cntx, sizes, &mut tally);
        run_dtype::<c64>(cntx, sizes, &mut tally);
    }
    let names: Vec<&str> = contexts.iter().map(|c| c.name()).collect();
    println!(
        "summary: {} PASS, {} MARGINAL, {} FAIL in {:.1} s; configurations: {}; CPU: {}",
        tally.pass,
        tally.marginal,
        tally.fail,
        start.elapsed().as_secs_f64(),
        names.join(", "),
        report.cpu
    );
    if tally.fail > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Storage of (C, A, B) tested by default: the three pure schemes and two mixtures.
const STORAGE_COMBOS: [[Storage; 3]; 5] = [
    [Storage::Col, Storage::Col, Storage::Col],
    [Storage::Row, Storage::Row, Storage::Row],
    [Storage::Gen, Storage::Gen, Storage::Gen],
    [Storage::Col, Storage::Row, Storage::Gen],
    [Storage::Neg, Storage::Col, Storage::Row],
];

fn run_dtype<T: Scalar + GemmPair<T>>(cntx: &Cntx, sizes: &[usize], tally: &mut Tally) {
    let mut rng = Rng::new(42);
    for op_a in [Op::N, Op::T, Op::C] {
        for op_b in [Op::N, Op::T, Op::C] {
            for [st_c, st_a, st_b] in STORAGE_COMBOS {
                for &size in sizes {
                    let name = format!(
                        "{}gemm_{}{}_{}{}{}",
                        T::LETTER,
                        op_a.letter(),
                        op_b.letter(),
                        st_c.letter(),
                        st_a.letter(),
                        st_b.letter()
                    );
                    let (m, n, k) = (size, size, size);
                    let (a_rows, a_cols) = op_a.stored_shape(m, k);
                    let (b_rows, b_cols) = op_b.stored_shape(k, n);
                    let values = Values::Uniform;
                    let a = TestMatrix::<T>::random(&mut rng, values, a_rows, a_cols, st_a);
                    let b = TestMatrix::<T>::random(&mut rng, values, b_rows, b_cols, st_b);
                    let mut c = TestMatrix::<T>::random(&mut rng, values, m, n, st_c);
                    let (alpha, beta): (T, T) = (rng.value(values), rng.value(values));
                    let original = c.buf.clone();
                    let mut c_ref = c.clone();
                    let av = op_a.apply(a.view()).scaled(alpha);
                    let bv = op_b.apply(b.view());

                    let t0 = Instant::now();
                    let result =
                        gemm_with_cntx(&av, &bv, &mut c.view_mut().with_beta(beta), cntx, None);
                    let seconds = t0.elapsed().as_secs_f64();
                    let flops_per_fma = if T::IS_COMPLEX { 8.0 } else { 2.0 };
                    let gflops = flops_per_fma * (m * n * k) as f64 / seconds.max(1e-9) / 1e9;

                    let (residual, outcome) = match result {
                        Err(e) => (f64::INFINITY, format!("FAIL ({e})")),
                        Ok(()) => {
                            let mag =
                                gemm_reference(&av, &bv, &mut c_ref.view_mut().with_beta(beta));
                            let cmp = compare(&c, &c_ref, &original, &mag, k);
                            let outcome = if let Some(idx) = cmp.wrote_outside {
                                format!("FAIL (wrote outside C at buffer index {idx})")
                            } else if cmp.residual <= PASS_LIMIT {
                                "PASS".to_string()
                            } else if cmp.residual <= MARGINAL_LIMIT {
                                "MARGINAL".to_string()
                            } else {
                                "FAIL".to_string()
                            };
                            (cmp.residual, outcome)
                        }
                    };
                    match outcome.as_str() {
                        "PASS" => tally.pass += 1,
                        "MARGINAL" => tally.marginal += 1,
                        _ => tally.fail += 1,
                    }
                    println!(
                        "{name:<16} {m:>5} {n:>5} {k:>5}  {gflops:>8.2} GFLOPS  resid {residual:>9.2e}  {outcome}"
                    );
                }
            }
        }
    }
}
