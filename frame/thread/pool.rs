//! The persistent thread pool. Workers are created once and reused; the calling thread works
//! as thread 0 of its team, so a team of t threads takes t − 1 workers.
//!
//! Workers wait on a *lane*: a preallocated channel plus a count of its idle workers. Plain
//! calls use the shared lane; calls that ask for pinning use one lane per core, whose workers
//! were pinned to that core when created (so pinning never leaks into unpinned calls). A call
//! first *reserves* one idle worker per helper it needs, spawning a new one on the lane when
//! none is idle, and only then sends its tasks: every task sent has a worker bound to take it,
//! so concurrent calls never wait for each other's workers and cannot deadlock, and each gets
//! exactly the team it asked for. The pool grows to the most threads ever in use at once and
//! stays there (no thread is created per call in steady state). An unpinned worker that starts
//! a task on its caller's CPU moves off it (`placement.rs`).
//!
//! Tasks borrow the caller's stack (the job closure, the completion counter); that is sound
//! because [`run_team`] does not return until every task it sent has finished, panics
//! included.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread::{self, Thread};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::error::{Error, ErrorKind, Result, internal_from_panic};
use crate::thread::placement::{current_cpu, step_off, usable_cpus};
use crate::thread::spin::SpinWait;

/// Most worker threads the pool will ever hold.
pub(crate) const MAX_WORKERS: usize = 4096;

/// One unit of work sent to a worker: run `job(tid)`, then count down `done`.
struct Task {
    job: *const (dyn Fn(usize) + Sync),
    tid: usize,
    done: *const Completion,
}

// SAFETY: the pointers refer to `Sync` data on the caller's stack that outlives the task
// (`run_team` waits for every task before returning).
unsafe impl Send for Task {}

/// The caller's side of a team: how many helpers are still running, and how to wake it.
struct Completion {
    remaining: AtomicUsize,
    caller: Thread,
    /// The caller's CPU when it sent the tasks, for helpers to step off (`placement.rs`);
    /// `None` for pinned teams and teams larger than the usable CPUs.
    caller_cpu: Option<usize>,
    /// The first panic of the team, as the error to report.
    panic: Mutex<Option<Error>>,
    on_panic: *const (dyn Fn() + Sync),
}

impl Completion {
    fn record_panic(&self, payload: &(dyn std::any::Any + Send)) {
        let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
        first.get_or_insert_with(|| internal_from_panic(payload));
    }
}

// SAFETY: shared only by reference with the team's threads; `on_panic` points at a `Sync`
// closure that outlives them.
unsafe impl Sync for Completion {}

struct Lane {
    tx: Sender<Task>,
    rx: Receiver<Task>,
    idle: AtomicUsize,
    core: Option<core_affinity::CoreId>,
}

struct Lanes {
    shared: Lane,
    per_core: Vec<Lane>,
}

static LANES: OnceLock<Lanes> = OnceLock::new();
static SPAWNED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static IN_WORKER: Cell<bool> = const { Cell::new(false) };
}

fn lane(core: Option<core_affinity::CoreId>) -> Lane {
    // Bounded, so the channel's storage is allocated once, here; at most MAX_WORKERS tasks
    // are ever queued because each needs a reserved worker.
    let (tx, rx) = bounded(MAX_WORKERS);
    Lane {
        tx,
        rx,
        idle: AtomicUsize::new(0),
        core,
    }
}

fn lanes() -> &'static Lanes {
    LANES.get_or_init(|| Lanes {
        shared: lane(None),
        per_core: core_affinity::get_core_ids()
            .unwrap_or_default()
            .into_iter()
            .map(|core| lane(Some(core)))
            .collect(),
    })
}

/// Whether the current thread is one of the pool's workers (a nested call).
pub(crate) fn in_worker() -> bool {
    IN_WORKER.get()
}

/// Worker threads created so far (they are never destroyed).
pub(crate) fn workers_spawned() -> usize {
    SPAWNED.load(Ordering::Relaxed)
}

/// Runs `job(tid)` for every `tid` in `0..size`: tid 0 on the calling thread, the others on
/// pool workers, pinned one per core (cores in order, starting after the caller's slot) when
/// `pin` is set. Returns when all have finished. If any panics, `on_panic` is called (to
/// release its teammates from barriers) and the result is an `Internal` error.
pub(crate) fn run_team(
    size: usize,
    pin: bool,
    job: &(dyn Fn(usize) + Sync),
    on_panic: &(dyn Fn() + Sync),
) -> Result<()> {
    if size <= 1 {
        return catch_unwind(AssertUnwindSafe(|| job(0))).map_err(|p| internal_from_panic(&*p));
    }
    let lanes = lanes();
    let lane_of = |tid: usize| match (pin, lanes.per_core.len()) {
        (true, cores) if cores > 0 => &lanes.per_core[tid % cores],
        _ => &lanes.shared,
    };
    for tid in 1..size {
        if let Err(e) = reserve(lane_of(tid)) {
            for earlier in 1..tid {
                lane_of(earlier).idle.fetch_add(1, Ordering::Release);
            }
            return Err(e);
        }
    }

    let done = Completion {
        remaining: AtomicUsize::new(size - 1),
        caller: thread::current(),
        caller_cpu: if !pin && size <= usable_cpus() {
            current_cpu()
        } else {
            None
        },
        panic: Mutex::new(None),
        // SAFETY: erasing the borrow's lifetime; helpers use it only before they report
        // completion, which this function waits for.
        on_panic: unsafe { std::mem::transmute::<&(dyn Fn() + Sync), _>(on_panic) },
    };
    for tid in 1..size {
        let task = Task {
            // SAFETY: erasing the borrow's lifetime; this function waits below until every
            // task has finished with it.
            job: unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), _>(job) },
            tid,
            done: &done,
        };
        lane_of(tid)
            .tx
            .try_send(task)
            .expect("a reserved worker has room in its lane");
    }
    if let Err(payload) = catch_unwind(AssertUnwindSafe(|| job(0))) {
        done.record_panic(&*payload);
        on_panic();
    }
    // Spin as the barriers do (`spin.rs`), then park; spurious wake-ups are fine.
    let mut spin = SpinWait::new();
    while done.remaining.load(Ordering::Acquire) != 0 {
        if !spin.keep_spinning() {
            thread::park();
        }
    }
    match done
        .panic
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Takes one idle worker of `lane` for a task about to be sent, spawning one if none idles.
fn reserve(lane: &'static Lane) -> Result<()> {
    let mut idle = lane.idle.load(Ordering::Acquire);
    while idle > 0 {
        match lane
            .idle
            .compare_exchange_weak(idle, idle - 1, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return Ok(()),
            Err(now) => idle = now,
        }
    }
    if SPAWNED.fetch_add(1, Ordering::AcqRel) >= MAX_WORKERS {
        SPAWNED.fetch_sub(1, Ordering::AcqRel);
        return Err(Error::new(
            ErrorKind::OutOfMemory,
            format!("gemm: the thread pool is at its limit of {MAX_WORKERS} workers"),
        ));
    }
    let spawned = thread::Builder::new()
        .name("oxblis-worker".into())
        .spawn(move || worker(lane));
    spawned.map(drop).map_err(|e| {
        SPAWNED.fetch_sub(1, Ordering::AcqRel);
        Error::new(
            ErrorKind::OutOfMemory,
            format!("gemm: could not start a thread: {e}"),
        )
    })
}

fn worker(lane: &'static Lane) {
    IN_WORKER.set(true);
    if let Some(core) = lane.core {
        core_affinity::set_for_current(core);
    }
    // A worker's alternate signal stack must hold a signal frame with AMX tile state, or
    // Linux refuses (or revokes the usefulness of) tile permission for the whole process
    // (config/amx_permission.rs). Rust's runtime sizes it from AT_MINSIGSTKSZ already; this
    // makes sure. Failing leaves the thread as it was, which AMX's request then reports.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    let _ = crate::config::amx_permission::fit_alt_stack();
    // The lane's sender is static, so the channel never disconnects. After each task the
    // worker polls for the next one (`next_task`) before blocking: a blocked worker's vCPU
    // halts, and waking it costs more than a short call (measured, docs/Performance.md).
    while let Some(task) = next_task(lane) {
        // SAFETY: the caller keeps `done` and `job` alive until `remaining` reaches 0, which
        // happens only after this task's last use of them below.
        let (done, job) = unsafe { (&*task.done, &*task.job) };
        // The scheduler put this (unpinned) worker on its caller's CPU: go elsewhere.
        if let Some(cpu) = done.caller_cpu
            && current_cpu() == Some(cpu)
        {
            step_off(cpu);
        }
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| job(task.tid))) {
            done.record_panic(&*payload);
            // SAFETY: as above.
            unsafe { (*done.on_panic)() };
        }
        // Idle again before reporting, so the caller's next call can reuse this worker.
        lane.idle.fetch_add(1, Ordering::Release);
        let caller = done.caller.clone();
        if done.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            // `done` may be gone now; `caller` is our own handle.
            caller.unpark();
        }
    }
}

/// How long a worker polls for its next task (yielding, `spin.rs`) before it blocks. Long,
/// because on a virtual machine a blocked worker is woken on its caller's CPU and stays there
/// for tens of calls: on the development VM, 2-thread sgemm 256³ calls took 0.34 instead of
/// 0.17 ms whenever the calls were 10 ms apart or more with a 200 µs poll, and stayed at
/// 0.17 ms for gaps up to 100 ms with this one (docs/Performance.md, "Two threads after a
/// pause"). While polling, a worker yields its CPU to anything else that wants it.
const WORKER_POLL_TIME: Duration = Duration::from_millis(50);

/// The next task of `lane`: polled for `WORKER_POLL_TIME`, then waited for.
fn next_task(lane: &Lane) -> Option<Task> {
    let mut spin = SpinWait::for_time(WORKER_POLL_TIME);
    loop {
        if let Ok(task) = lane.rx.try_recv() {
            return Some(task);
        }
        if !spin.keep_spinning() {
            return lane.rx.recv().ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tid_runs_once_and_the_caller_is_tid_zero() {
        let ran: Vec<AtomicUsize> = (0..6).map(|_| AtomicUsize::new(0)).collect();
        let caller = thread::current().id();
        let job = |tid: usize| {
            ran[tid].fetch_add(1, Ordering::SeqCst);
            assert_eq!(tid == 0, thread::current().id() == caller);
            assert_eq!(tid != 0, in_worker());
        };
        for _ in 0..50 {
            run_team(6, false, &job, &|| ()).unwrap();
        }
        assert!(ran.iter().all(|r| r.load(Ordering::SeqCst) == 50));
    }

    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    fn workers_never_hold_an_alternate_stack_too_small_for_amx_frames() {
        use crate::config::amx_permission::{alt_stack_size, alt_stack_size_needed};
        let needed = alt_stack_size_needed();
        let sizes: Vec<std::sync::Mutex<Option<usize>>> =
            (0..4).map(|_| Default::default()).collect();
        let job = |tid: usize| *sizes[tid].lock().unwrap() = alt_stack_size();
        run_team(4, false, &job, &|| ()).unwrap();
        for (tid, size) in sizes.iter().enumerate().skip(1) {
            // None: no alternate stack, signals run on the thread's own stack (not checked).
            if let Some(size) = *size.lock().unwrap() {
                assert!(size >= needed, "worker {tid}: {size} < {needed}");
            }
        }
    }

    #[test]
    fn a_panicking_helper_is_reported_and_the_pool_survives() {
        let job = |tid: usize| assert!(tid != 2, "helper 2 fails");
        let poisoned = std::sync::atomic::AtomicBool::new(false);
        let e = run_team(3, false, &job, &|| poisoned.store(true, Ordering::SeqCst)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Internal);
        assert!(e.message().contains("helper 2 fails"), "{e}");
        assert!(poisoned.load(Ordering::SeqCst));
        run_team(3, false, &|_| (), &|| ()).unwrap();
    }

    #[test]
    fn pinned_teams_run() {
        let count = AtomicUsize::new(0);
        run_team(
            3,
            true,
            &|_| {
                count.fetch_add(1, Ordering::SeqCst);
            },
            &|| (),
        )
        .unwrap();
        assert_eq!(count.into_inner(), 3);
    }
}
