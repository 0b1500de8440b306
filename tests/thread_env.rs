//! The thread environment variables are read once per process, so each case runs the
//! testsuite binary (`--info` prints the thread defaults) in a fresh subprocess.

use std::process::Command;

const VARS: [&str; 8] = [
    "BLIS_NUM_THREADS",
    "BLIS_NT",
    "OMP_NUM_THREADS",
    "BLIS_JC_NT",
    "BLIS_PC_NT",
    "BLIS_IC_NT",
    "BLIS_JR_NT",
    "BLIS_IR_NT",
];

/// (the report's threads line, stderr) with exactly `env` set among the thread variables.
fn threads_line(env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_testsuite"));
    cmd.arg("--info");
    for var in VARS {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().expect("testsuite runs");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("threads") || l.contains("thread env"))
        .collect::<Vec<_>>()
        .join("\n");
    (line, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn totals_follow_blis_precedence() {
    let (line, err) = threads_line(&[("BLIS_NUM_THREADS", "3"), ("OMP_NUM_THREADS", "5")]);
    assert!(line.contains(": 3 in total"), "{line}");
    assert!(err.is_empty(), "{err}");
    let (line, _) = threads_line(&[("BLIS_NT", "5"), ("OMP_NUM_THREADS", "2")]);
    assert!(line.contains(": 5 in total"), "{line}");
    let (line, _) = threads_line(&[("OMP_NUM_THREADS", "4,2")]);
    assert!(line.contains(": 4 in total"), "{line}");
}

#[test]
fn unset_means_every_cpu() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    let (line, _) = threads_line(&[]);
    assert!(line.contains(&format!(": {cpus} in total")), "{line}");
}

#[test]
fn per_loop_variables_give_ways() {
    let (line, _) = threads_line(&[
        ("BLIS_IC_NT", "2"),
        ("BLIS_JR_NT", "3"),
        ("BLIS_NUM_THREADS", "8"),
    ]);
    assert!(
        line.contains("ways jc 1 pc 1 ic 2 jr 3 ir 1 (6 in total)"),
        "{line}"
    );
}

#[test]
fn malformed_values_are_reported_not_misread() {
    let (line, err) = threads_line(&[("BLIS_NUM_THREADS", "four"), ("OMP_NUM_THREADS", "2")]);
    assert!(line.contains(": 2 in total"), "{line}");
    assert!(err.contains("ignoring BLIS_NUM_THREADS=\"four\""), "{err}");
    assert!(
        line.contains("thread env     : ignoring BLIS_NUM_THREADS"),
        "{line}"
    );
    let (_, err) = threads_line(&[("BLIS_JC_NT", "0")]);
    assert!(err.contains("BLIS_JC_NT"), "{err}");
}
