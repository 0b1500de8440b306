//! Reporting bad arguments the BLAS way. The reference routines call `XERBLA(SRNAME, INFO)`
//! (CBLAS: `cblas_xerbla(info, routine, format, ...)`), and programs replace it with their
//! own (the reference test programs do, to check the error exits). Calls from inside this
//! library are direct and could not be interposed by the linker, so the handler is looked up
//! at run time with `dlsym(RTLD_DEFAULT, …)`: the program's own definition comes first in
//! the lookup order, then a preloaded oxblis, then other libraries. oxblis's `xerbla_`
//! prints the reference message on stderr and **returns** (the reference XERBLA stops the
//! program; like OpenBLAS, we let the caller go on, with nothing computed).
//!
//! oxblis defines `xerbla_` but not `cblas_xerbla`: the CBLAS handler is variadic, which
//! stable Rust cannot define, and a program or a loaded reference CBLAS usually has one (the
//! reference's prints and then exits). When none is found, oxblis prints the reference
//! message itself and returns.
//!
//! CBLAS detail kept from the reference: a row-major call is checked as the column-major
//! call it becomes (A and B swapped), so the positions of M/N and LDA/LDB come out swapped;
//! the reference sets the global `RowMajorStrg` while such a call runs and its
//! `cblas_xerbla` (and the CBLAS test programs' own) swaps them back for gemm. oxblis sets
//! it only around its calls of `cblas_xerbla`, the one place it is read, so that calls
//! without errors do not pay for it.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::io::Write;
use std::sync::OnceLock;

/// The reference CBLAS global that marks a row-major call in progress (read by
/// `cblas_xerbla` implementations). Exported so programs written against the reference CBLAS
/// link; written through [`set_row_major_flag`], which finds the instance the program uses.
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static mut RowMajorStrg: c_int = 0;

#[cfg(unix)]
unsafe extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// The first definition of `name` in the process's global lookup order, or null.
fn lookup(name: &CStr) -> *mut c_void {
    #[cfg(unix)]
    {
        // RTLD_DEFAULT is the null handle on glibc and musl.
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads.
        unsafe { dlsym(std::ptr::null_mut(), name.as_ptr()) }
    }
    #[cfg(not(unix))]
    {
        let _ = name;
        std::ptr::null_mut()
    }
}

/// The `RowMajorStrg` the program sees (a reference CBLAS's, if one is loaded and comes
/// first, else ours), looked up once.
fn row_major_flag_ptr() -> *mut c_int {
    static ADDRESS: OnceLock<usize> = OnceLock::new();
    *ADDRESS.get_or_init(|| {
        let found = lookup(c"RowMajorStrg");
        if found.is_null() {
            (&raw mut RowMajorStrg) as usize
        } else {
            found as usize
        }
    }) as *mut c_int
}

/// Sets `RowMajorStrg`. Like the reference, a plain global: concurrent CBLAS errors of both
/// layouts can see each other's value, which only affects the numbering in error messages.
fn set_row_major_flag(on: bool) {
    // SAFETY: the address of a C `int` global (ours, or the same-named reference one).
    unsafe { row_major_flag_ptr().write_volatile(on as c_int) };
}

fn row_major_flag() -> bool {
    // SAFETY: as in `set_row_major_flag`.
    unsafe { row_major_flag_ptr().read_volatile() != 0 }
}

type FortranXerbla = unsafe extern "C" fn(*const c_char, *const c_int, usize);
type CblasXerbla = unsafe extern "C" fn(c_int, *const c_char, *const c_char, ...);

/// Reports bad argument `info` of Fortran routine `name` (e.g. `"DGEMM "`, blank-padded to
/// six characters like the reference) through the program's `xerbla_`.
pub(crate) fn call_xerbla(name: &str, info: c_int) {
    let handler = lookup(c"xerbla_");
    if handler.is_null() {
        print_xerbla(name, info);
        return;
    }
    // SAFETY: a symbol named `xerbla_` is the Fortran XERBLA(SRNAME, INFO): a character
    // pointer, an integer pointer and gfortran's hidden length of SRNAME (ours included).
    unsafe {
        let handler: FortranXerbla = std::mem::transmute(handler);
        handler(name.as_ptr().cast(), &info, name.len());
    }
}

/// Reports bad argument `info` of `routine` (e.g. `c"cblas_dgemm"`) through the process's
/// `cblas_xerbla` if there is one (with a reference-style `form` message and its one integer
/// argument), else prints the reference message. `RowMajorStrg` says `row_major` while the
/// handler runs, the only time anything reads it, so calls without an error never write it.
pub(crate) fn call_cblas_xerbla(
    row_major: bool,
    info: c_int,
    routine: &CStr,
    form: &CStr,
    value: c_int,
) {
    set_row_major_flag(row_major);
    let handler = lookup(c"cblas_xerbla");
    if handler.is_null() {
        print_cblas_xerbla(info, routine);
    } else {
        // SAFETY: a symbol named `cblas_xerbla` is the CBLAS handler, variadic after `form`;
        // `form` asks for at most one int, which is passed.
        unsafe {
            let handler: CblasXerbla = std::mem::transmute(handler);
            handler(info, routine.as_ptr(), form.as_ptr(), value);
        }
    }
    set_row_major_flag(false);
}

fn print_xerbla(name: &str, info: c_int) {
    let _ = writeln!(
        std::io::stderr(),
        " ** On entry to {} parameter number {info:2} had an illegal value",
        name.trim_end()
    );
}

fn print_cblas_xerbla(mut info: c_int, routine: &CStr) {
    let routine = routine.to_string_lossy();
    if row_major_flag() && routine.contains("gemm") {
        info = match info {
            4 => 5,
            5 => 4,
            9 => 11,
            11 => 9,
            other => other,
        };
    }
    let _ = writeln!(
        std::io::stderr(),
        "Parameter {info} to routine {routine} was incorrect"
    );
}

/// The default Fortran error handler: prints the reference message (` ** On entry to DGEMM
/// parameter number  8 had an illegal value`) and returns. A program's own `xerbla_` takes
/// precedence.
///
/// # Safety
/// `srname` points at `len` readable bytes (or is null), `info` at an int (or is null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn xerbla_(srname: *const c_char, info: *const c_int, len: usize) {
    let name = if srname.is_null() {
        String::new()
    } else {
        // SAFETY: the caller's; gfortran passes the declared length of SRNAME.
        let bytes = unsafe { std::slice::from_raw_parts(srname.cast::<u8>(), len.min(64)) };
        String::from_utf8_lossy(bytes).into_owned()
    };
    // SAFETY: the caller's.
    let info = unsafe { info.as_ref() }.copied().unwrap_or(0);
    print_xerbla(&name, info);
}
