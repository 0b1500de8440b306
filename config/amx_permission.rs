//! Linux's permission for AMX tile data, requested once per process before any tile
//! instruction can run, and the alternate-signal-stack sizing it depends on.
//!
//! CPUID and XCR0 say the CPU and the OS support AMX (`config/cpu_features.rs`); Linux also
//! wants each process to ask for the 8 KiB of tile state (`XTILEDATA`, xstate component 18)
//! before using it, or the first tile instruction faults (SIGILL). The request:
//!
//! 1. `arch_prctl(ARCH_GET_XCOMP_SUPP)`: does the kernel offer component 18 at all?
//! 2. `arch_prctl(ARCH_REQ_XCOMP_PERM, 18)`: ask for it. Linux grows the signal frame by the
//!    tile state, so it refuses with **ENOSPC** while any thread of the process has an
//!    alternate signal stack too small for the larger frame. Rust's runtime gives every
//!    thread one (for stack-overflow reports), sized from `getauxval(AT_MINSIGSTKSZ)`;
//!    other runtimes and older libraries use the fixed `SIGSTKSZ` of 8 KiB, too small. On
//!    ENOSPC the calling thread's stack is enlarged (to [`alt_stack_size_needed`]) and the
//!    request retried once; a second ENOSPC means another thread is to blame, which we
//!    cannot fix from here.
//! 3. `arch_prctl(ARCH_GET_XCOMP_PERM)`: check that bit 18 is now set.
//!
//! Any refusal is returned as a sentence for the runtime report, and the AMX configuration
//! is then not used (the AVX-512 one is): never a SIGILL. The pool's own threads check their
//! alternate stack when they start ([`fit_alt_stack`]), so they never hold a too-small one.

/// `arch_prctl` codes (`asm/prctl.h`).
const ARCH_GET_XCOMP_SUPP: libc::c_ulong = 0x1021;
const ARCH_GET_XCOMP_PERM: libc::c_ulong = 0x1022;
const ARCH_REQ_XCOMP_PERM: libc::c_ulong = 0x1023;
/// The xstate component number of AMX tile data.
const XFEATURE_XTILEDATA: libc::c_ulong = 18;

/// What the request asks of the kernel: `arch_prctl(code, arg)`, returning the syscall's
/// result or `Err(errno)`. The real one is [`arch_prctl`]; tests pass a stand-in that
/// plays a kernel with particular answers (this machine has no AMX).
pub(crate) type ArchPrctl = fn(code: libc::c_ulong, arg: &mut u64) -> Result<(), i32>;

/// The `arch_prctl` system call. `arg` is the value passed for requests and the place
/// answers are written for queries.
pub(crate) fn arch_prctl(code: libc::c_ulong, arg: &mut u64) -> Result<(), i32> {
    let value = if code == ARCH_REQ_XCOMP_PERM {
        *arg as libc::c_ulong
    } else {
        arg as *mut u64 as libc::c_ulong
    };
    // SAFETY: arch_prctl with these codes reads an integer argument or writes one u64
    // through the pointer, which points at `arg`, valid for the call.
    let ret = unsafe { libc::syscall(libc::SYS_arch_prctl, code, value) };
    if ret == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

/// Requests XTILEDATA permission for this process through `kernel` (see the module docs),
/// enlarging the calling thread's alternate signal stack once if the kernel asks for it.
/// `Err` says, in a sentence, why AMX cannot be used.
pub(crate) fn request_tile_permission(kernel: ArchPrctl) -> Result<(), String> {
    let mut supported = 0u64;
    if let Err(errno) = kernel(ARCH_GET_XCOMP_SUPP, &mut supported) {
        return Err(format!(
            "Linux refused ARCH_GET_XCOMP_SUPP ({}): a kernel before 5.16 has no AMX support",
            describe(errno)
        ));
    }
    if supported & (1 << XFEATURE_XTILEDATA) == 0 {
        return Err(format!(
            "Linux does not offer AMX tile data (ARCH_GET_XCOMP_SUPP = {supported:#x}, bit 18 clear)"
        ));
    }
    let mut request = XFEATURE_XTILEDATA;
    match kernel(ARCH_REQ_XCOMP_PERM, &mut request) {
        Ok(()) => {}
        Err(libc::ENOSPC) => {
            // The signal frame with tile state no longer fits some thread's alternate stack.
            // Ours we can fix; then ask once more.
            fit_alt_stack().map_err(|why| {
                format!("Linux refused AMX tile data (ENOSPC: alternate signal stack too small) and {why}")
            })?;
            let mut request = XFEATURE_XTILEDATA;
            match kernel(ARCH_REQ_XCOMP_PERM, &mut request) {
                Ok(()) => {}
                Err(libc::ENOSPC) => {
                    return Err(format!(
                        "Linux refused AMX tile data (ENOSPC): another thread of this process has \
                         an alternate signal stack smaller than {} bytes",
                        alt_stack_size_needed()
                    ));
                }
                Err(errno) => return Err(refused(errno)),
            }
        }
        Err(errno) => return Err(refused(errno)),
    }
    let mut permitted = 0u64;
    match kernel(ARCH_GET_XCOMP_PERM, &mut permitted) {
        Ok(()) if permitted & (1 << XFEATURE_XTILEDATA) != 0 => Ok(()),
        Ok(()) => Err(format!(
            "Linux granted the request but ARCH_GET_XCOMP_PERM = {permitted:#x} lacks bit 18"
        )),
        Err(errno) => Err(format!(
            "Linux refused ARCH_GET_XCOMP_PERM ({})",
            describe(errno)
        )),
    }
}

fn refused(errno: i32) -> String {
    format!(
        "Linux refused AMX tile data (ARCH_REQ_XCOMP_PERM: {})",
        describe(errno)
    )
}

fn describe(errno: i32) -> String {
    format!("{}", std::io::Error::from_raw_os_error(errno))
}

/// The alternate signal stack a thread needs once tile data is enabled: four times the
/// kernel's minimum signal frame (`AT_MINSIGSTKSZ`, which counts the tile state on AMX
/// CPUs), so a handler has room to run as well, and never less than 64 KiB.
pub(crate) fn alt_stack_size_needed() -> usize {
    // SAFETY: getauxval reads the process's auxiliary vector; no memory is passed.
    let min_frame = unsafe { libc::getauxval(libc::AT_MINSIGSTKSZ) } as usize;
    (4 * min_frame.max(libc::MINSIGSTKSZ)).max(64 << 10)
}

/// The calling thread's alternate signal stack: `Some(size)` if one is installed.
pub(crate) fn alt_stack_size() -> Option<usize> {
    let mut old = std::mem::MaybeUninit::<libc::stack_t>::zeroed();
    // SAFETY: a null new stack only queries; `old` is writable for one stack_t.
    let ret = unsafe { libc::sigaltstack(std::ptr::null(), old.as_mut_ptr()) };
    // SAFETY: written by a successful call (and zeroed before, so initialised regardless).
    let old = unsafe { old.assume_init() };
    (ret == 0 && old.ss_flags & libc::SS_DISABLE == 0).then_some(old.ss_size)
}

/// Makes sure the calling thread's alternate signal stack, if it has one, can take a signal
/// frame with tile state: a smaller one is replaced by a fresh one of
/// [`alt_stack_size_needed`] bytes. A thread without one is left alone (signals then run on
/// the normal stack, which the kernel does not check). `Err` says why it could not.
///
/// The replaced stack is not freed: it belongs to whoever installed it (Rust's runtime
/// unmaps its own at thread exit). The new one is leaked on purpose: the kernel may deliver
/// a signal on it until the thread ends, and this happens at most once per thread.
pub(crate) fn fit_alt_stack() -> Result<(), String> {
    let needed = alt_stack_size_needed();
    match alt_stack_size() {
        None => return Ok(()),
        Some(size) if size >= needed => return Ok(()),
        Some(_) => {}
    }
    let memory: &'static mut [u8] = Vec::leak(vec![0u8; needed]);
    let stack = libc::stack_t {
        ss_sp: memory.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: needed,
    };
    // SAFETY: the new stack is `needed` bytes of memory that is never freed, so it stays
    // valid for as long as the kernel may use it.
    let ret = unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) };
    if ret == 0 {
        Ok(())
    } else {
        Err(format!(
            "enlarging this thread's to {needed} bytes failed ({})",
            std::io::Error::last_os_error()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A kernel that offers tile data and grants it unless the calling thread's alternate
    /// stack is smaller than needed (then ENOSPC), as Linux does for a process whose only
    /// small stack is the caller's.
    fn strict_kernel(code: libc::c_ulong, arg: &mut u64) -> Result<(), i32> {
        match code {
            ARCH_GET_XCOMP_SUPP => {
                *arg = (1 << 17) | (1 << 18) | 0x2ff;
                Ok(())
            }
            ARCH_REQ_XCOMP_PERM => {
                assert_eq!(*arg, 18);
                match alt_stack_size() {
                    Some(size) if size < alt_stack_size_needed() => Err(libc::ENOSPC),
                    _ => Ok(()),
                }
            }
            ARCH_GET_XCOMP_PERM => {
                *arg = (1 << 17) | (1 << 18) | 0x2ff;
                Ok(())
            }
            _ => Err(libc::EINVAL),
        }
    }

    static REQUESTS: AtomicUsize = AtomicUsize::new(0);
    /// A kernel that always answers ENOSPC: some other thread's stack is too small.
    fn blocked_kernel(code: libc::c_ulong, arg: &mut u64) -> Result<(), i32> {
        if code == ARCH_REQ_XCOMP_PERM {
            REQUESTS.fetch_add(1, Ordering::SeqCst);
            return Err(libc::ENOSPC);
        }
        strict_kernel(code, arg)
    }

    /// Installs a `size`-byte alternate stack on the calling thread (leaked).
    fn install_alt_stack(size: usize) {
        assert!(
            try_install_alt_stack(size),
            "sigaltstack refused {size} bytes"
        );
    }

    fn try_install_alt_stack(size: usize) -> bool {
        let memory = Vec::leak(vec![0u8; size]);
        let stack = libc::stack_t {
            ss_sp: memory.as_mut_ptr().cast(),
            ss_flags: 0,
            ss_size: size,
        };
        // SAFETY: leaked memory of `size` bytes, valid forever.
        unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) == 0 }
    }

    /// Installs the smallest alternate stack Linux accepts (MINSIGSTKSZ, or more where the
    /// process may use large state: once a thread of it holds the AMX permission, as other
    /// tests' calls may have asked on an AMX machine, Linux refuses stacks too small for a
    /// signal frame with tiles) and returns its size, which is still smaller than needed.
    fn install_too_small_alt_stack() -> usize {
        let mut size = libc::MINSIGSTKSZ;
        while !try_install_alt_stack(size) {
            size *= 2;
            assert!(
                size < alt_stack_size_needed(),
                "sigaltstack refused every size too small for tile state"
            );
        }
        size
    }

    #[test]
    fn a_too_small_alternate_stack_on_the_calling_thread_is_enlarged_and_the_request_retried() {
        std::thread::spawn(|| {
            let small = install_too_small_alt_stack();
            assert_eq!(alt_stack_size(), Some(small));
            request_tile_permission(strict_kernel).unwrap();
            assert_eq!(alt_stack_size(), Some(alt_stack_size_needed()));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn enospc_after_the_fix_is_blamed_on_another_thread() {
        std::thread::spawn(|| {
            install_too_small_alt_stack();
            let before = REQUESTS.load(Ordering::SeqCst);
            let why = request_tile_permission(blocked_kernel).unwrap_err();
            assert_eq!(REQUESTS.load(Ordering::SeqCst) - before, 2, "one retry");
            assert!(why.contains("another thread"), "{why}");
            // Our own stack was still fixed.
            assert_eq!(alt_stack_size(), Some(alt_stack_size_needed()));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_big_enough_alternate_stack_is_left_alone() {
        std::thread::spawn(|| {
            let size = alt_stack_size_needed() + 4096;
            install_alt_stack(size);
            fit_alt_stack().unwrap();
            assert_eq!(alt_stack_size(), Some(size));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_kernel_without_tile_data_is_a_clear_refusal() {
        fn no_amx(code: libc::c_ulong, arg: &mut u64) -> Result<(), i32> {
            match code {
                ARCH_GET_XCOMP_SUPP => {
                    *arg = 0x2ff;
                    Ok(())
                }
                _ => panic!("must not ask for what is not offered"),
            }
        }
        let why = request_tile_permission(no_amx).unwrap_err();
        assert!(why.contains("does not offer AMX tile data"), "{why}");
    }

    #[test]
    fn the_real_kernel_answers_and_on_a_cpu_without_amx_refuses() {
        let answer = request_tile_permission(arch_prctl);
        let has_amx = crate::config::Features::detect().contains(crate::config::Features::AMX_TILE);
        if has_amx {
            println!("AMX CPU: the real request answered {answer:?}");
        } else {
            let why = answer.unwrap_err();
            println!("no AMX here; Linux said: {why}");
            assert!(why.starts_with("Linux"), "{why}");
        }
    }
}
