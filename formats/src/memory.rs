//! Large buffers on transparent huge pages.
//!
//! Past a few megabytes a buffer is fresh memory from the system, and each
//! 4 KB page faults on its first write. On Linux a buffer that asks for
//! transparent huge pages before it is written (as numpy does for its
//! arrays) takes 512 times fewer faults. Advice only: the contents and the
//! allocation are unchanged, and it does nothing elsewhere.

/// Asks for transparent huge pages for the whole 2 MB pages of the
/// `bytes` at `start`, an allocation not yet written there; nothing below
/// 4 MB or off Linux.
///
/// ```
/// let mut coords: Vec<u64> = Vec::with_capacity(1 << 20);
/// tessera_formats::memory::advise_huge_pages(coords.as_ptr().cast(), coords.capacity() * 8);
/// coords.extend(0..1 << 20);
/// assert_eq!(coords[12345], 12345);
/// ```
pub fn advise_huge_pages(start: *const u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = start as usize;
        let first = start.next_multiple_of(HUGE);
        let end = (start + bytes) / HUGE * HUGE;
        if bytes >= 2 * HUGE && end > first {
            // SAFETY: advice on whole pages inside a live allocation; it
            // changes no contents, only how pages not yet touched will be
            // mapped. Failure is harmless.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, bytes);
}

/// An empty vector with room for `capacity` elements, on huge pages when
/// that room is large ([`advise_huge_pages`]).
pub fn with_capacity_on_huge_pages<T>(capacity: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(capacity);
    advise_huge_pages(v.as_ptr().cast(), v.capacity() * std::mem::size_of::<T>());
    v
}
