//! A time limit for device waits that their API cannot time out.
//!
//! `cuStreamSynchronize` and `clFinish` block until the device is done, and
//! a kernel that never ends (a probe loop gone wrong, a driver fault) would
//! hold a CI job until the runner's own limit, hours later. Vulkan's fence
//! wait takes a timeout (`vulkan::stream`, 300 s); this gives CUDA and
//! OpenCL the same limit. A wait is armed before it blocks and disarmed
//! when it returns; one thread, started with the first wait, looks at the
//! armed waits once a second. A wait past its limit cannot be cancelled
//! (the device and the blocked thread are lost to this process), so the
//! process prints why and exits with status 2, ERROR, writing no report:
//! reports are staged and land only at the end (`report::write`).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a device may take for one batch (the same as Vulkan's fence
/// wait): far beyond any frame's kernels, even on a CPU driver.
pub const DEVICE_WAIT_LIMIT: Duration = Duration::from_secs(300);

/// How often the watching thread looks.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The armed waits, and what happens to one past its limit.
struct Watch {
    armed: Mutex<Armed>,
    on_expiry: fn(Wait),
}

#[derive(Default)]
struct Armed {
    next_id: u64,
    waits: BTreeMap<u64, (Instant, Wait)>,
}

/// What is waited for, named when it expires: the API ("CUDA") and what
/// it did not finish ("a batch"). Static, so arming costs no allocation.
#[derive(Clone, Copy)]
pub struct Wait {
    pub api: &'static str,
    pub what: &'static str,
}

/// Disarms its wait when dropped.
pub struct Guard {
    watch: &'static Watch,
    id: u64,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(mut armed) = self.watch.armed.lock() {
            armed.waits.remove(&self.id);
        }
    }
}

impl Watch {
    fn arm(&'static self, limit: Duration, wait: Wait) -> Guard {
        let mut armed = self.armed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let id = armed.next_id;
        armed.next_id += 1;
        armed.waits.insert(id, (Instant::now() + limit, wait));
        Guard { watch: self, id }
    }

    /// Each armed wait past its limit, once.
    fn look(&self, now: Instant) {
        let expired: Vec<Wait> = {
            let mut armed = self.armed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let late: Vec<u64> = armed.waits.iter().filter(|(_, (at, _))| *at <= now).map(|(id, _)| *id).collect();
            late.iter().filter_map(|id| armed.waits.remove(id)).map(|(_, wait)| wait).collect()
        };
        for wait in expired {
            (self.on_expiry)(wait);
        }
    }

    fn start(&'static self) {
        std::thread::Builder::new()
            .name("ulpgate-device-watchdog".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(LOOK_EVERY);
                    self.look(Instant::now());
                }
            })
            .map(drop)
            .unwrap_or_else(|e| eprintln!("warning: no device watchdog ({e}): device waits have no time limit"));
    }
}

fn exit_with_error(wait: Wait) {
    eprintln!(
        "error: the {} device did not finish {} within {} s; a kernel that does not end cannot be stopped from this process, so it exits \
         without a report (status 2)",
        wait.api,
        wait.what,
        DEVICE_WAIT_LIMIT.as_secs()
    );
    std::process::exit(2);
}

/// Arms `wait` for [`DEVICE_WAIT_LIMIT`]; drop the guard once it returns.
pub fn arm(wait: Wait) -> Guard {
    static WATCH: OnceLock<&'static Watch> = OnceLock::new();
    let watch = WATCH.get_or_init(|| {
        let watch: &'static Watch = Box::leak(Box::new(Watch { armed: Mutex::default(), on_expiry: exit_with_error }));
        watch.start();
        watch
    });
    watch.arm(DEVICE_WAIT_LIMIT, wait)
}

#[cfg(test)]
mod tests {
    use super::*;

    static EXPIRED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

    fn record(wait: Wait) {
        EXPIRED.lock().unwrap().push(wait.what);
    }

    fn wait(what: &'static str) -> Wait {
        Wait { api: "test", what }
    }

    #[test]
    fn a_wait_past_its_limit_expires_once_and_a_finished_one_never() {
        let watch: &'static Watch = Box::leak(Box::new(Watch { armed: Mutex::default(), on_expiry: record }));
        let t0 = Instant::now();
        let hung = watch.arm(Duration::from_secs(2), wait("hung"));
        let finished = watch.arm(Duration::from_secs(2), wait("finished"));
        let long = watch.arm(Duration::from_secs(60), wait("long"));
        drop(finished);
        watch.look(t0 + Duration::from_secs(1));
        assert!(EXPIRED.lock().unwrap().is_empty());
        watch.look(t0 + Duration::from_secs(3));
        watch.look(t0 + Duration::from_secs(4));
        assert_eq!(*EXPIRED.lock().unwrap(), ["hung"]);
        drop(hung);
        drop(long);
        assert!(watch.armed.lock().unwrap().waits.is_empty());
    }
}
