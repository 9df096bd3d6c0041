//! Inputs kept on the device between runs.
//!
//! A tensor's [`Version`] changes whenever its contents may, and equal
//! versions hold equal contents, so a buffer uploaded for one version
//! serves every later run that reads that version: an input is uploaded
//! once, and only results come back. The least recently used buffers are
//! released when the kept bytes pass the limit.

use std::sync::Mutex;

use ocl::Buffer;
use tessera_formats::Version;

/// A buffer of one of the element types kernels read.
#[derive(Clone)]
pub(crate) enum Upload {
    U32(Buffer<u32>),
    U64(Buffer<u64>),
    I64(Buffer<i64>),
    F64(Buffer<f64>),
    F32(Buffer<f32>),
    I32(Buffer<i32>),
    /// Truth values, a byte each (0 or 1).
    U8(Buffer<u8>),
}

/// Which part of a tensor a buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Part {
    /// The index array `slot` of level `level`.
    Array {
        level: u32,
        slot: u8,
    },
    Values,
}

/// A kept buffer: its key, the buffer and its bytes.
type Kept = ((Version, Part), Upload, usize);

/// Buffers by the version of the tensor they copy, most recently used last.
pub(crate) struct Resident {
    kept: Mutex<Vec<Kept>>,
    limit: usize,
}

impl Resident {
    /// A cache of at most `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Resident {
            kept: Mutex::new(Vec::new()),
            limit,
        }
    }

    /// The buffer of `part` of the tensor at `version`: the kept one, or
    /// `upload`'s (`bytes` long), kept for later runs.
    pub fn get_or_upload(
        &self,
        key: (Version, Part),
        bytes: usize,
        upload: impl FnOnce() -> ocl::Result<Upload>,
    ) -> ocl::Result<Upload> {
        let lock = || self.kept.lock().unwrap_or_else(|e| e.into_inner());
        {
            let mut kept = lock();
            if let Some(at) = kept.iter().position(|(k, _, _)| *k == key) {
                let entry = kept.remove(at);
                let buffer = entry.1.clone();
                kept.push(entry);
                return Ok(buffer);
            }
        }
        // Uploaded outside the lock: other runs go on meanwhile (two runs
        // may both upload a new version; the second keeps its copy too,
        // and the older one ages out).
        let buffer = upload()?;
        if bytes <= self.limit {
            let mut kept = lock();
            let mut total: usize = kept.iter().map(|e| e.2).sum::<usize>() + bytes;
            while total > self.limit && !kept.is_empty() {
                total -= kept.remove(0).2;
            }
            kept.push((key, buffer.clone(), bytes));
        }
        Ok(buffer)
    }

    /// The bytes kept.
    pub fn bytes(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|e| e.2)
            .sum()
    }
}
