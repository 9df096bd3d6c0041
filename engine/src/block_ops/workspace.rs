//! The dense workspace, written once: how a value is added at a key and
//! the key recorded, for every tier.
//!
//! A dense workspace holds a value per key, a bitmap of the keys set and
//! the list of keys set, in the order they were first set. The
//! interpreter runs these ops on the runtime's workspace through its eager
//! builder; compiled tiers emit them into the kernel. A sorted drain
//! finds the bitmap's words that hold keys from the list
//! (`runtime::workspace`), so a new key writes only its bit and its place
//! in the list: marking a summary of the bitmap here too cost Cranelift's
//! SpGEMM a quarter of its time.

use tessera_formats::{Cmp, IntOp};

use super::KernelBuilder;
use crate::bytecode::FloatOp;

/// `values[key] += x`; a key not set before is marked in the bitmap (bit
/// `key % 64` of word `key / 64`) and appended to the list of keys.
///
/// ```
/// use tessera_engine::block_ops::{workspace_add, KernelBuilder};
/// use tessera_engine::interp::{Eager, Operands};
/// use tessera_engine::runtime::workspace::Workspace;
///
/// let mut workspace = Workspace::new(&[100]);
/// let cells = workspace.dense_cells().expect("100 slots are stored densely");
/// let mut k = Eager::new(Operands::levels(&[]).with_workspace(cells));
/// for (key, x) in [(70, 1.0), (3, 2.0), (70, 4.0)] {
///     workspace_add(&mut k, key, x);
/// }
/// let mut drained = Vec::new();
/// workspace.drain(|coords, value| drained.push((coords[0], value)));
/// assert_eq!(drained, [(3, 2.0), (70, 5.0)]);
/// ```
#[inline(always)]
pub fn workspace_add<K: KernelBuilder>(k: &mut K, key: K::Int, x: K::Float) {
    let six = k.int(6);
    let word_at = k.binary(IntOp::Shr, key, six);
    let word = k.workspace_word(word_at);
    let one = k.int(1);
    let bit = k.binary(IntOp::Shl, one, key);
    let held = k.binary(IntOp::BitAnd, word, bit);
    let zero = k.int(0);
    let fresh = k.compare(Cmp::Eq, held, zero);
    k.when(fresh, |k| {
        let marked = k.binary(IntOp::BitOr, word, bit);
        k.set_workspace_word(word_at, marked);
        k.push_touched_key(key);
    });
    k.add_to_workspace(key, x);
}

/// The key of `coords`, the workspace's leading coordinates: the sum of
/// each times its stride. The last coordinate's stride is 1 when `coords`
/// are all of the workspace's.
#[inline(always)]
pub fn workspace_key<K: KernelBuilder>(k: &mut K, coords: &[K::Int], complete: bool) -> K::Int {
    let mut key = k.int(0);
    for (d, &c) in coords.iter().enumerate() {
        let term = if complete && d + 1 == coords.len() {
            c
        } else {
            let stride = k.workspace_stride(d);
            k.mul(c, stride)
        };
        key = k.add(key, term);
    }
    key
}

/// For each stored entry at positions `begin..end` (coordinate `c`, value
/// `v`): [`workspace_add`] of `scale * v` at key `base + c`. A row of a
/// Gustavson product, scattered into the workspace.
#[inline(always)]
pub fn workspace_row<K: KernelBuilder>(
    k: &mut K,
    entries: (K::Coords, K::Run),
    range: (K::Int, K::Int),
    scale: K::Float,
    base: K::Int,
) {
    k.fold_entries(entries, range, [], |k, _, c, v, []| {
        let key = k.add(base, c);
        let x = k.float_op(FloatOp::Mul, scale, v);
        workspace_add(k, key, x);
        []
    });
}
