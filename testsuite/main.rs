//! The oxblis testsuite, in the style of BLIS's: input files choose datatypes, storage
//! schemes, op() pairs, scalar classes, problem sizes, thread layouts and configurations;
//! every combination runs through `gemm_with_cntx` and is checked (`gemm_test.rs`); one line
//! per test, a summary, and a non-zero exit status on any FAIL. `docs/Testsuite.md`.
//!
//! Layout: `input.rs` parses the input files, `gemm_test.rs` runs and checks one test,
//! `report.rs` prints lines, progress, CSV and the summary, `selftest.rs` plants a broken
//! kernel to show the checks can fail. Exit status: 0 all passed (MARGINAL allowed), 1 a
//! test failed, 2 bad usage, input or configuration.

mod gemm_test;
mod input;
mod report;
mod selftest;

use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use oxblis::check::Op;
use oxblis::{Cntx, Element, GemmPair, bf16, c32, c64};

use crate::gemm_test::{GemmCase, Outcome};
use crate::input::{
    General, Operation, OperationKind, Threads, parse_general, parse_operations, parse_thread_list,
};
use crate::report::{Report, TestLine};

const USAGE: &str = "usage: testsuite [options]
  (no options)       the default run: testsuite/input.general and input.operations, built in
  -g FILE            general parameters from FILE (format: docs/Testsuite.md)
  -o FILE            operations from FILE
  --quick            the built-in quick parameters (a few seconds)
  --full             the built-in full parameters (every storage combination; minutes)
  --config NAMES     test only these configurations (comma-separated; overrides the file)
  --threads LIST     thread settings, e.g. 1,2,1.2.1.1.1 (overrides the file)
  --concurrent N     N application threads run the whole suite at once, each with its own
                     Rntm (only failures are printed), to catch thread-safety bugs
  --csv FILE         also write every result to FILE as CSV
  --info             print the runtime report (build baseline, CPU features,
                     configurations, the chosen one, blocksizes, thread defaults) and exit
  --broken-kernel-selftest
                     run with a deliberately wrong dgemm kernel planted in every
                     configuration: the run must report FAIL (it proves the checks can fail)";

/// Command-line options.
#[derive(Default)]
struct Options {
    general: Option<String>,
    operations: Option<String>,
    preset: Option<&'static str>,
    configs: Option<Vec<String>>,
    threads: Option<String>,
    concurrent: usize,
    csv: Option<String>,
    info: bool,
    selftest: bool,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        concurrent: 1,
        ..Options::default()
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{arg} needs {what}"));
        match arg.as_str() {
            "-g" => o.general = Some(value("a file")?),
            "-o" => o.operations = Some(value("a file")?),
            "--quick" => o.preset = Some("quick"),
            "--full" => o.preset = Some("full"),
            "--config" => {
                let names = value("configuration names")?;
                o.configs = Some(names.split(',').map(str::to_string).collect());
            }
            "--threads" => o.threads = Some(value("a list of thread settings")?),
            "--concurrent" => {
                let n = value("a number of threads")?;
                o.concurrent = n
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or(format!("--concurrent needs a positive number, not {n:?}"))?;
            }
            "--csv" => o.csv = Some(value("a file")?),
            "--info" => o.info = true,
            "--broken-kernel-selftest" => o.selftest = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.preset.is_some() && o.general.is_some() {
        return Err("-g and --quick/--full both choose the general parameters".into());
    }
    Ok(o)
}

/// The general parameters and operations the options select.
fn load_inputs(o: &Options) -> Result<(General, Vec<Operation>), String> {
    let read = |path: &str| std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"));
    let general_text;
    let (general_name, general_text) = match (&o.general, o.preset) {
        (Some(path), _) => {
            general_text = read(path)?;
            (path.as_str(), general_text.as_str())
        }
        (None, Some("quick")) => ("input.general.quick", include_str!("input.general.quick")),
        (None, Some(_)) => ("input.general.full", include_str!("input.general.full")),
        (None, None) => ("input.general", include_str!("input.general")),
    };
    let mut general = parse_general(general_name, general_text).map_err(|e| e.0)?;
    let operations = match &o.operations {
        Some(path) => parse_operations(path, &read(path)?),
        None => parse_operations("input.operations", include_str!("input.operations")),
    }
    .map_err(|e| e.0)?;
    if let Some(list) = &o.threads {
        general.threads = parse_thread_list(list).ok_or(format!(
            "--threads: expected totals (2) or ways jc.pc.ic.jr.ir (1.2.1.1.1), each at least 1, \
             comma-separated; found {list:?}"
        ))?;
    }
    if let Some(names) = &o.configs {
        general.configs = Some(names.clone());
    }
    Ok((general, operations))
}

/// The contexts to test: named ones (an error names the first that cannot run here) or
/// every one this CPU supports.
fn contexts(general: &General) -> Result<Vec<Cntx>, String> {
    match &general.configs {
        None => Ok(oxblis::supported_contexts().into_iter().cloned().collect()),
        Some(names) => names
            .iter()
            .map(|name| {
                oxblis::context_named(name)
                    .cloned()
                    .map_err(|e| e.to_string())
            })
            .collect(),
    }
}

/// One unit of work: a case on a context with a thread setting, for one datatype.
#[derive(Clone)]
struct Job {
    dtype: char,
    config: usize,
    threads: Threads,
    case: GemmCase,
}

/// Every (dtype, context, operation, op pair, storage, scalars, size, threads) combination.
fn jobs(general: &General, operations: &[Operation], n_contexts: usize) -> Vec<Job> {
    let mut out = Vec::new();
    let mut seed = 1;
    for config in 0..n_contexts {
        for &dtype in &general.dtypes {
            let complex = matches!(dtype, 'c' | 'z');
            for op in operations.iter().filter(|op| op.enabled) {
                // The only kind so far; the match makes a new one a compile error here.
                match op.kind {
                    OperationKind::Gemm => {}
                }
                // For real datatypes c is t and r is n: run each distinct pair once.
                let mut pairs: Vec<(Op, Op)> = Vec::new();
                for &(a, b) in &op.ops {
                    let real = |o: Op| match o {
                        Op::C => Op::T,
                        Op::R => Op::N,
                        o => o,
                    };
                    let pair = if complex { (a, b) } else { (real(a), real(b)) };
                    if !pairs.contains(&pair) {
                        pairs.push(pair);
                    }
                }
                for &(op_a, op_b) in &pairs {
                    for &storage in &general.storage {
                        for &(alpha, beta) in &general.scalars {
                            for &size in &general.sizes {
                                let dim = |d: Option<usize>| d.unwrap_or(size);
                                for &threads in &general.threads {
                                    seed += 1;
                                    out.push(Job {
                                        dtype,
                                        config,
                                        threads,
                                        case: GemmCase {
                                            m: dim(op.dims[0]),
                                            n: dim(op.dims[1]),
                                            k: dim(op.dims[2]),
                                            op_a,
                                            op_b,
                                            storage,
                                            alpha,
                                            beta,
                                            values: general.values,
                                            repeats: general.repeats,
                                            seed,
                                        },
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

fn run_job<A: GemmPair<B>, B: Element<Acc = A::Acc>>(job: &Job, cntx: &Cntx) -> TestLine {
    let rntm = job
        .threads
        .rntm()
        .expect("thread settings are validated when parsed");
    let result = gemm_test::run::<A, B>(&job.case, cntx, &rntm);
    TestLine {
        config: cntx.name().to_string(),
        name: job.case.name::<A>(),
        case: job.case.clone(),
        threads: job.threads.label(),
        result,
    }
}

fn run_one(job: &Job, cntx: &Cntx) -> TestLine {
    match job.dtype {
        's' => run_job::<f32, f32>(job, cntx),
        'd' => run_job::<f64, f64>(job, cntx),
        'c' => run_job::<c32, c32>(job, cntx),
        'z' => run_job::<c64, c64>(job, cntx),
        'b' => run_job::<bf16, bf16>(job, cntx),
        'i' => run_job::<i8, i8>(job, cntx),
        _ => run_job::<u8, i8>(job, cntx),
    }
}

fn main() -> ExitCode {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("testsuite: {why}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = oxblis::runtime_report();
    if opts.info {
        print!("{runtime}");
        return if runtime.chosen.is_ok() {
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
    let (general, operations) = match load_inputs(&opts) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("testsuite: {e}");
            return ExitCode::from(2);
        }
    };
    let mut contexts = match contexts(&general) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("testsuite: {e}");
            return ExitCode::from(2);
        }
    };
    if opts.selftest {
        contexts = contexts
            .into_iter()
            .map(selftest::plant_broken_dgemm)
            .collect();
    }
    let jobs = jobs(&general, &operations, contexts.len());
    let names: Vec<&str> = contexts.iter().map(|c| c.name()).collect();
    let mut report = match Report::new(opts.csv.as_deref(), jobs.len() * opts.concurrent) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("testsuite: {e}");
            return ExitCode::from(2);
        }
    };
    report::say(format_args!(
        "oxblis testsuite: {} tests × {} application thread(s); configurations: {}",
        jobs.len(),
        opts.concurrent,
        names.join(", ")
    ));
    let start = Instant::now();
    if opts.concurrent == 1 {
        report.header();
        for job in &jobs {
            report.record(run_one(job, &contexts[job.config]), true);
        }
    } else {
        // Salt mode: every application thread runs every job, in its own order (rotated),
        // so different threads hit different configurations and shapes at the same time.
        let shared = Mutex::new(report);
        std::thread::scope(|s| {
            for t in 0..opts.concurrent {
                let (jobs, contexts, shared) = (&jobs, &contexts, &shared);
                s.spawn(move || {
                    let offset = t * jobs.len() / opts.concurrent;
                    for i in 0..jobs.len() {
                        let job = &jobs[(i + offset) % jobs.len()];
                        let line = run_one(job, &contexts[job.config]);
                        let mut report = shared.lock().unwrap_or_else(|p| p.into_inner());
                        let show = line.result.outcome != Outcome::Pass;
                        report.record(line, show);
                    }
                });
            }
        });
        report = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    }
    let failed = report.finish(start.elapsed(), &names, &runtime.cpu.to_string());
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
