//! Progress of a run, read from another thread: how many of its chunks are
//! done. A front end polls it to show how far a long statement has got.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Chunks done and chunks in all of the runs given this handle
/// ([`EvalOptions::progress`](crate::EvalOptions::progress)). A run given
/// one is split into chunks even on one thread, as with a
/// [`CancelToken`](super::CancelToken).
///
/// ```
/// use tessera_engine::runtime::Progress;
/// use tessera_engine::testing::{random_tensor, EntryKind, Rng};
/// use tessera_engine::{Engine, EvalOptions, Inputs};
/// use tessera_formats::Format;
///
/// let a = random_tensor(&mut Rng::new(1), &[300, 300], EntryKind::Random, &Format::csr()).unwrap();
/// let progress = Progress::new();
/// let options = EvalOptions { progress: Some(progress.clone()), chunk_work: Some(64), ..EvalOptions::default() };
/// Engine::new().eval_with("s = A(i,j) * A(i,j)", &Inputs::new().with("A", &a), &options).unwrap();
/// assert!(progress.total() > 1);
/// assert_eq!(progress.done(), progress.total());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<[AtomicU64; 2]>);

impl Progress {
    pub fn new() -> Self {
        Progress::default()
    }
    /// Chunks finished so far.
    pub fn done(&self) -> u64 {
        self.0[0].load(Ordering::Relaxed)
    }
    /// Chunks of the runs started so far.
    pub fn total(&self) -> u64 {
        self.0[1].load(Ordering::Relaxed)
    }
    /// A run of `chunks` chunks begins.
    pub(crate) fn begin(&self, chunks: u64) {
        self.0[1].fetch_add(chunks, Ordering::Relaxed);
    }
    /// One chunk is done.
    pub(crate) fn advance(&self) {
        self.0[0].fetch_add(1, Ordering::Relaxed);
    }
}
