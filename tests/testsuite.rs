//! The testsuite binary, run as a user runs it: the default run passes; a malformed input
//! file, an unknown or unsupported configuration and bad options exit 2 with a clear
//! message; a planted broken kernel makes it report FAIL and exit 1; the concurrent mode,
//! CSV output and `--info` work.

use std::path::PathBuf;
use std::process::{Command, Output};

fn testsuite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_testsuite"))
        .args(args)
        .env_remove("BLIS_ARCH_TYPE")
        .output()
        .expect("the testsuite binary runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("oxblis-ts-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn the_default_run_passes() {
    let out = testsuite(&[]);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "{stderr}\n{}",
        &stdout[stdout.len().saturating_sub(3000)..]
    );
    let summary = stdout.lines().last().unwrap();
    assert!(
        summary.starts_with("summary: ") && summary.contains(" 0 FAIL"),
        "{summary}"
    );
    // Every dtype, the three storage schemes and 1 and 2 threads were in it.
    for needle in [
        "sgemm_",
        "dgemm_",
        "cgemm_",
        "bgemm_tn_",
        "zgemm_cr_",
        "_crg ",
        "2.1.1.1.1",
        "1.2.1.1.1",
    ] {
        assert!(stdout.contains(needle), "no {needle:?} in the default run");
    }
}

#[test]
fn a_broken_kernel_is_reported_as_fail() {
    let out = testsuite(&["--quick", "--broken-kernel-selftest"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("dgemm_") && l.ends_with("FAIL"))
    );
    // Only dgemm has the broken kernel.
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("sgemm_") && l.ends_with("FAIL"))
    );
}

#[test]
fn malformed_input_names_the_file_and_line() {
    let general = scratch("general", "1   # repeats\nccc\nsdq   # datatypes\n");
    let out = testsuite(&["-g", general.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let want = format!("{}:3: expected datatypes", general.display());
    assert!(stderr.contains(&want), "{stderr}");

    let ops = scratch("ops", "gemm\n1\n-1 -1 -1\nnx\n");
    let out = testsuite(&["-o", ops.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(":4: expected op(A) op(B) pairs"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(general);
    let _ = std::fs::remove_file(ops);
}

#[test]
fn unknown_and_unsupported_configurations_are_refused() {
    let out = testsuite(&["--quick", "--config", "zen9"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("zen9") && stderr.contains("no such configuration"),
        "{stderr}"
    );
    // A configuration this CPU cannot run, if the registry has one here.
    let report = oxblis::runtime_report();
    let unsupported = report.configurations.iter().find(|c| !c.missing.is_empty());
    match unsupported {
        Some(config) => {
            let out = testsuite(&["--quick", "--config", config.name]);
            let (_, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains("needs CPU features"), "{stderr}");
        }
        None => eprintln!("every registered configuration runs on this CPU; skipped that half"),
    }
    // Forced through the environment, as BLIS does.
    let out = Command::new(env!("CARGO_BIN_EXE_testsuite"))
        .arg("--quick")
        .env("BLIS_ARCH_TYPE", "zen9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("BLIS_ARCH_TYPE=zen9"));
}

#[test]
fn bad_options_print_usage() {
    for args in [
        &["--bogus"][..],
        &["--threads", "0"],
        &["--concurrent", "x"],
        &["-g"],
    ] {
        let out = testsuite(args);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("testsuite: "), "{args:?}: {stderr}");
    }
}

#[test]
fn concurrent_mode_csv_and_info() {
    let csv = std::env::temp_dir().join(format!("oxblis-ts-{}.csv", std::process::id()));
    let out = testsuite(&[
        "--quick",
        "--concurrent",
        "3",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}{stdout}");
    assert!(stdout.contains("× 3 application thread(s)"), "{stdout}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    let _ = std::fs::remove_file(&csv);
    let mut lines = rows.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("config,test,m,n,k,threads")
    );
    let first = stdout.lines().next().unwrap();
    let per_thread: usize = first.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert_eq!(
        lines.count(),
        3 * per_thread,
        "one CSV row per test per thread"
    );

    let out = testsuite(&["--info"]);
    let (stdout, _) = text(&out);
    assert!(out.status.success());
    assert!(
        stdout.contains("generic") && stdout.contains("threads"),
        "{stdout}"
    );
}
