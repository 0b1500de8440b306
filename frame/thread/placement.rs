//! Where a team's threads run: a worker that finds itself on its caller's CPU steps off it.
//!
//! Linux wakes a blocked worker, and starts a new one, on its waker's CPU whenever it judges
//! the other CPUs busy, and in a KVM guest a halted vCPU looks busy (preempted) to it. The
//! worker and its caller then share one CPU while another idles, and the load balancer took
//! tens of milliseconds to part them on the development VM: a whole burst of short calls ran
//! at one thread's speed (docs/Performance.md, "Two threads after a pause"). So a worker that
//! starts a task on its caller's CPU moves itself off that CPU: it narrows its own affinity to
//! exclude that CPU, which migrates it at once, and then restores the affinity it had. Only
//! unpinned workers of teams no larger than the CPUs the process may use do this; elsewhere
//! sharing a CPU is unavoidable or chosen.

use std::sync::OnceLock;

/// The CPUs this process may run on, counted once.
pub(crate) fn usable_cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The CPU the calling thread runs on now, where the OS says.
#[cfg(target_os = "linux")]
pub(crate) fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only reads the thread's state.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn current_cpu() -> Option<usize> {
    None
}

/// Moves the calling thread off `cpu` to another CPU its affinity allows (the scheduler picks
/// which), then gives it back the affinity it had; says whether it moved. Does nothing when no
/// other CPU is allowed or a call fails.
#[cfg(target_os = "linux")]
pub(crate) fn step_off(cpu: usize) -> bool {
    let set_size = size_of::<libc::cpu_set_t>();
    if cpu >= 8 * set_size {
        return false;
    }
    // SAFETY: cpu_set_t is plain bits, so all-zero is a valid (empty) set.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `allowed` is a live cpu_set_t of `set_size` bytes; pid 0 is this thread.
    if unsafe { libc::sched_getaffinity(0, set_size, &mut allowed) } != 0 {
        return false;
    }
    let mut elsewhere = allowed;
    // SAFETY: cpu is inside the set (checked above), all these macros ask.
    let others = unsafe {
        libc::CPU_CLR(cpu, &mut elsewhere);
        libc::CPU_COUNT(&elsewhere)
    };
    if others == 0 {
        return false;
    }
    // SAFETY: `elsewhere` is a live cpu_set_t of `set_size` bytes; pid 0 is this thread. The
    // call migrates the thread before it returns.
    if unsafe { libc::sched_setaffinity(0, set_size, &elsewhere) } != 0 {
        return false;
    }
    let moved = current_cpu() != Some(cpu);
    // SAFETY: as above, for `allowed`; the thread stays where it is.
    unsafe { libc::sched_setaffinity(0, set_size, &allowed) };
    moved
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn step_off(_cpu: usize) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn stepping_off_a_cpu_moves_the_thread_and_keeps_its_affinity() {
        let Some(start) = current_cpu() else { return };
        let affinity = || {
            // SAFETY: as in `step_off`.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            let size = size_of::<libc::cpu_set_t>();
            // SAFETY: as in `step_off`.
            assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut set) }, 0);
            set
        };
        let before = affinity();
        // SAFETY: counting a live set.
        let allowed = unsafe { libc::CPU_COUNT(&before) };
        assert_eq!(step_off(start), allowed > 1);
        // SAFETY: comparing two live sets.
        let restored = unsafe { libc::CPU_EQUAL(&before, &affinity()) };
        assert!(restored, "the affinity was not restored");
    }
}
