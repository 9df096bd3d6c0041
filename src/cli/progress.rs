//! Progress for long loads, generations, conversions and statements: a
//! spinner on standard error with what is happening and for how long (and,
//! for a statement, how many of its chunks are done).
//!
//! Shown only when standard error is a terminal and the work is large, so
//! that pipes, scripts and tests see clean output. The file readers report
//! no progress of their own, so a spinner with elapsed time is what can be
//! shown honestly.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use tessera_engine::runtime::Progress;

/// Files larger than this get a spinner while they are read and packed.
pub const LARGE_FILE_BYTES: u64 = 8 << 20;

/// Generated or converted tensors with more entries than this get one too.
pub const LARGE_ENTRIES: usize = 1 << 20;

/// A spinner that clears itself when dropped; inert when not shown.
pub struct Spinner(Option<ProgressBar>);

impl Spinner {
    /// A spinner saying `message` when `large` and standard error is a terminal.
    pub fn start(message: impl Into<String>, large: bool) -> Spinner {
        if !large || !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(message.into());
        bar.enable_steady_tick(Duration::from_millis(100));
        Spinner(Some(bar))
    }

    /// A spinner for work on the file of `bytes` bytes.
    pub fn for_file(message: impl Into<String>, bytes: u64) -> Spinner {
        Self::start(message, bytes > LARGE_FILE_BYTES)
    }

    /// Changes what the spinner says.
    pub fn say(&self, message: impl Into<String>) {
        if let Some(bar) = &self.0 {
            bar.set_message(message.into());
        }
    }
}

/// Runs the statement `what` with a spinner counting its chunks (`progress`
/// is the run's), when `large` and standard error is a terminal.
pub fn while_running<T>(what: &str, progress: &Progress, large: bool, run: impl FnOnce() -> T) -> T {
    let spinner = Spinner::start(format!("running {what}"), large);
    if spinner.0.is_none() {
        return run();
    }
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if progress.total() > 1 {
                    spinner.say(format!(
                        "running {what}: {} of {} chunks",
                        progress.done(),
                        progress.total()
                    ));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let result = run();
        finished.store(true, Ordering::Relaxed);
        result
    })
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
