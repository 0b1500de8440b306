//! The C interface as a C program sees it: `tests/c/abi_check.c`, compiled against
//! `include/oxblis.h` and linked to the `cdylib` this build produced, must pass its checks
//! (results of the Fortran and CBLAS entry points, error exits through the program's own
//! `xerbla_` / `cblas_xerbla`); and the header must declare exactly what `frame/blas/`
//! exports. Needs a C compiler (`cc`, or `$CC`), which Rust's linker already requires.
//! The reference BLAS test programs are a separate script: `testsuite/blas-reference/run.sh`.
#![cfg(target_os = "linux")]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A `liboxblis.so` built from the current sources. `cargo test` links its tests to the
/// rlib and does not refresh the cdylib, so this builds it, once per test run, with its
/// own target folder (the outer cargo holds the lock on the main one).
fn library_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // The same sandbox feature as this test build, so the C ABI is tested in each.
            let sandbox = if cfg!(feature = "sandbox-ref99") {
                Some("sandbox-ref99")
            } else if cfg!(feature = "sandbox-gemmlike") {
                Some("sandbox-gemmlike")
            } else {
                None
            };
            let exe = std::env::current_exe().unwrap();
            let target = exe.ancestors().nth(3).unwrap().join(format!(
                "c-abi{}",
                sandbox.map(|f| format!("-{f}")).unwrap_or_default()
            ));
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let built = Command::new(cargo)
                .args(["build", "--lib", "--quiet", "--manifest-path"])
                .arg(Path::new(ROOT).join("Cargo.toml"))
                .args(sandbox.map(|f| vec!["--features", f]).unwrap_or_default())
                .env("CARGO_TARGET_DIR", &target)
                .status()
                .unwrap();
            assert!(built.success(), "building liboxblis.so failed");
            target.join("debug")
        })
        .clone()
}

#[test]
fn a_c_program_gets_right_results_and_its_own_error_handlers() {
    let lib_dir = library_dir();
    let scratch = std::env::temp_dir().join(format!("oxblis-c-abi-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let exe = scratch.join("abi_check");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let compiled = Command::new(&cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(Path::new(ROOT).join("include"))
        .arg(Path::new(ROOT).join("tests/c/abi_check.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib_dir.display()))
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        // -rdynamic exports the program's xerbla_ / cblas_xerbla so oxblis finds them.
        .args(["-loxblis", "-rdynamic", "-lm"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(
        compiled.status.success(),
        "compiling tests/c/abi_check.c failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    // cargo test puts its own target folders on LD_LIBRARY_PATH, which outranks the rpath
    // and may hold an older liboxblis.so. The program runs on a 2 MiB stack, a spawned Rust
    // thread's default: the library here is unoptimized (the dev profile), where the sup
    // kernels' frames once grew to 10 MiB (build.rs).
    let run = Command::new("sh")
        .args(["-c", "ulimit -s 2048 && exec \"$0\""])
        .arg(&exe)
        .env("LD_LIBRARY_PATH", &lib_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let _ = std::fs::remove_dir_all(&scratch);
    assert!(
        run.status.success() && stdout.contains("all checks passed"),
        "abi_check failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Function names declared in `include/oxblis.h` (`void name(` or `int name(`).
fn header_functions() -> BTreeSet<String> {
    let header = std::fs::read_to_string(Path::new(ROOT).join("include/oxblis.h")).unwrap();
    header
        .lines()
        .filter_map(|l| l.strip_prefix("void ").or_else(|| l.strip_prefix("int ")))
        .map(|rest| rest.split('(').next().unwrap().trim().to_string())
        .collect()
}

/// Functions `frame/blas/` exports: `extern "C" fn name` in the sources, and the entry
/// points (and aliases) named in the `fortran_gemm_entry!` and `cblas_*_entry!` invocations.
fn exported_functions() -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut main, mut aliases) = (BTreeSet::new(), BTreeSet::new());
    for entry in std::fs::read_dir(Path::new(ROOT).join("frame/blas")).unwrap() {
        let source = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in source.lines().map(str::trim) {
            let exported = line
                .strip_prefix("pub unsafe extern \"C\" fn ")
                .or_else(|| line.strip_prefix("pub extern \"C\" fn "));
            if let Some(rest) = exported {
                let name = rest.split('(').next().unwrap();
                if !name.starts_with('$') {
                    main.insert(name.to_string());
                }
            }
            let cblas = line
                .strip_prefix("cblas_real_entry!(")
                .or_else(|| line.strip_prefix("cblas_complex_entry!("));
            if let Some(rest) = cblas {
                // cblas_real_entry!(f64, cblas_dgemm);
                let name = rest
                    .split(',')
                    .nth(1)
                    .unwrap()
                    .trim()
                    .trim_end_matches(");");
                main.insert(name.to_string());
            }
            if let Some(rest) = line.strip_prefix("fortran_gemm_entry!(") {
                // fortran_gemm_entry!(f64, "DGEMM", dgemm_, [dgemm, DGEMM, DGEMM_]);
                let fields: Vec<&str> = rest.split(',').map(str::trim).collect();
                main.insert(fields[2].to_string());
                let list = rest.split('[').nth(1).unwrap().split(']').next().unwrap();
                aliases.extend(list.split(',').map(|a| a.trim().to_string()));
            }
        }
    }
    (main, aliases)
}

#[test]
fn the_header_declares_what_the_library_exports() {
    let declared = header_functions();
    let (main, aliases) = exported_functions();
    assert!(main.len() >= 10, "parsed too few exports: {main:?}");
    // cblas_xerbla is declared for programs to define; oxblis does not (frame/blas/xerbla.rs).
    let mut expected = main.clone();
    expected.insert("cblas_xerbla".to_string());
    assert_eq!(
        declared, expected,
        "include/oxblis.h and frame/blas/ disagree"
    );
    let header = std::fs::read_to_string(Path::new(ROOT).join("include/oxblis.h")).unwrap();
    for prefix in ["sgemm", "SGEMM", "SGEMM_"] {
        assert!(
            header.contains(prefix),
            "the header should mention the alias {prefix}"
        );
    }
    // And the built library really exports all of them.
    let lib_path = library_dir().join("liboxblis.so");
    assert!(
        lib_path.is_absolute(),
        "an absolute path keeps dlopen off LD_LIBRARY_PATH"
    );
    // SAFETY: loading oxblis runs no initializers beyond Rust's own.
    let lib = unsafe { libloading::Library::new(&lib_path) }.unwrap();
    for name in main
        .iter()
        .chain(&aliases)
        .chain(["RowMajorStrg".to_string()].iter())
    {
        // SAFETY: only the symbol's presence is checked; nothing is called.
        let found = unsafe { lib.get::<*const ()>(name.as_bytes()) };
        assert!(
            found.is_ok(),
            "{} does not export {name}",
            lib_path.display()
        );
    }
}
