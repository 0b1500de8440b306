//! `BLIS_ARCH_TYPE` and `BLIS_ARCH_DEBUG` are read once per process, so each case runs the
//! testsuite binary in a fresh subprocess with its own environment.

use std::process::{Command, Output};

fn testsuite(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_testsuite"));
    cmd.args(args)
        .env_remove("BLIS_ARCH_TYPE")
        .env_remove("BLIS_ARCH_DEBUG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("testsuite binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn an_unknown_arch_type_is_a_clear_error() {
    let out = testsuite(&["--quick"], &[("BLIS_ARCH_TYPE", "nonsense")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("BLIS_ARCH_TYPE=nonsense: no such configuration"),
        "{err}"
    );
    assert!(
        err.contains("generic"),
        "the error lists the known configurations: {err}"
    );
    // --info reports the same problem instead of a choice.
    let out = testsuite(&["--info"], &[("BLIS_ARCH_TYPE", "nonsense")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).contains("chosen         : none: BLIS_ARCH_TYPE=nonsense"));
}

#[test]
fn a_forced_configuration_is_used_and_reported() {
    let out = testsuite(&["--info"], &[("BLIS_ARCH_TYPE", "generic")]);
    assert!(out.status.success());
    let report = text(&out.stdout);
    assert!(report.contains("BLIS_ARCH_TYPE : generic"), "{report}");
    assert!(report.contains("chosen         : generic"), "{report}");
    assert!(report.contains("reference_f64_4x4"), "{report}");
}

#[test]
fn arch_debug_logs_the_choice_to_stderr() {
    let out = testsuite(&["--info"], &[("BLIS_ARCH_DEBUG", "1")]);
    assert!(out.status.success());
    let log = text(&out.stderr);
    assert!(
        log.contains("runtime report") && log.contains("chosen"),
        "{log}"
    );
    let quiet = testsuite(&["--info"], &[]);
    assert!(text(&quiet.stderr).is_empty());
}

#[test]
fn an_unknown_config_option_is_refused() {
    let out = testsuite(&["--config", "nonsense"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no such configuration"));
}

#[test]
fn the_quick_suite_passes() {
    let out = testsuite(&["--quick"], &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(" 0 FAIL"), "{stdout}");
}

#[test]
fn forcing_sapphirerapids_without_amx_is_a_clear_error() {
    let report = oxblis::runtime_report();
    let Some(spr) = report
        .configurations
        .iter()
        .find(|c| c.name == "sapphirerapids")
    else {
        eprintln!("no sapphirerapids configuration in this build (not x86-64): skipped");
        return;
    };
    if spr.missing.is_empty() && spr.refused.is_none() {
        eprintln!("this CPU runs AMX: skipped");
        return;
    }
    let out = testsuite(&["--quick"], &[("BLIS_ARCH_TYPE", "sapphirerapids")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let why = if spr.missing.is_empty() {
        "cannot run here: Linux".to_string()
    } else {
        format!("needs CPU features this CPU lacks: {}", spr.missing)
    };
    assert!(
        err.contains("BLIS_ARCH_TYPE=sapphirerapids") && err.contains(&why),
        "{err}"
    );
}
