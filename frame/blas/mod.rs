//! The C ABI: the reference BLAS and CBLAS gemm entry points, exported from the `cdylib` and
//! `staticlib` builds of this crate, so programs linked against `libblas.so.3` (C, Fortran,
//! numpy, LAPACK) can run on oxblis unchanged.
//!
//! * `fortran.rs`: `sgemm_`, `dgemm_`, `cgemm_`, `zgemm_` (gfortran convention: everything by
//!   reference; the hidden string lengths gfortran appends are accepted and not needed), with
//!   the aliases common BLAS builds also export (`dgemm`, `DGEMM`, `DGEMM_`).
//! * `cblas.rs`: `cblas_sgemm` … `cblas_zgemm`, row- and column-major.
//! * `xerbla.rs`: error reporting through `xerbla_` / `cblas_xerbla`, looked up at run time so
//!   a program's own handler wins, with defaults that print the reference message.
//! * `threads.rs`: `oxblis_set_num_threads` / `oxblis_get_num_threads`, the global thread
//!   default for C callers.
//! * `gemm.rs`: what they share: the reference argument checks, in reference order, and the
//!   product as [`crate::gemm_ex`] computes it, with the global thread defaults.
//! * `one_tile.rs`: the shortcut for a problem of one sup tile, from those checks straight to
//!   the kernel call.
//!
//! Nothing is computed after a bad argument, and no panic crosses the boundary: it is caught,
//! reported on stderr, and C is left as it was. The C declarations are `include/oxblis.h`;
//! linking, `LD_PRELOAD` and the reference test programs are in `docs/BlasAbi.md`.

mod cblas;
mod fortran;
mod gemm;
mod one_tile;
mod threads;
mod xerbla;
