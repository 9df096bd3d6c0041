//! Permutation files: a reordering saved by `tessera reorder` and reused by
//! later runs (`tessera eval --reorder-from`), so that the ordering is paid
//! for once.
//!
//! The text form, 1-based like Matrix Market and FROSTT:
//! ```text
//! %%tessera permutation
//! % any comment lines
//! modes 2
//! mode 1 4           <- mode 1 of size 4 is permuted: 4 lines follow,
//! 3                     line k holds the original coordinate that
//! 1                     new coordinate k holds
//! 4
//! 2
//! mode 2 4 unchanged <- mode 2 keeps its order
//! ```

use std::io::Write;
use std::path::Path;

use crate::error::{FormatError, Result};

use super::permutation::Permutation;
use super::ModePermutations;

const HEADER: &str = "%%tessera permutation";

/// Writes `perms` in the text form, with `comment` (one line per line of
/// it) after the header.
pub fn write_permutations_to<W: Write + ?Sized>(
    writer: &mut W,
    perms: &ModePermutations,
    comment: &str,
) -> std::io::Result<()> {
    writeln!(writer, "{HEADER}")?;
    for line in comment.lines() {
        writeln!(writer, "% {line}")?;
    }
    writeln!(writer, "modes {}", perms.order())?;
    for (mode, (size, perm)) in perms.shape().iter().zip(perms.modes()).enumerate() {
        match perm {
            Some(p) => {
                writeln!(writer, "mode {} {size}", mode + 1)?;
                for &old in p.new_to_old() {
                    writeln!(writer, "{}", old + 1)?;
                }
            }
            None => writeln!(writer, "mode {} {size} unchanged", mode + 1)?,
        }
    }
    Ok(())
}

/// Writes `perms` to the file `path`.
pub fn save_permutations(path: &Path, perms: &ModePermutations, comment: &str) -> Result<()> {
    let io_error = |e: std::io::Error| FormatError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    let file = std::fs::File::create(path).map_err(io_error)?;
    let mut writer = std::io::BufWriter::new(file);
    write_permutations_to(&mut writer, perms, comment).map_err(io_error)?;
    writer.flush().map_err(io_error)
}

/// Reads a permutation file.
pub fn load_permutations(path: &Path) -> Result<ModePermutations> {
    let bytes = std::fs::read(path).map_err(|e| FormatError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    parse_permutations(&bytes, path)
}

/// Parses the text form; `path` names the source in errors, which give its
/// line.
///
/// ```
/// use std::path::Path;
/// use tessera_formats::reorder::parse_permutations;
/// let text = "%%tessera permutation\nmodes 2\nmode 1 2\n2\n1\nmode 2 5 unchanged\n";
/// let perms = parse_permutations(text.as_bytes(), Path::new("a.perm")).unwrap();
/// assert_eq!(perms.mode(0).unwrap().old_of(0), 1);
/// assert!(perms.mode(1).is_none());
/// let bad = parse_permutations(b"%%tessera permutation\nmodes 1\nmode 1 2\n1\n1\n", Path::new("a.perm"));
/// assert!(bad.unwrap_err().to_string().starts_with("a.perm:5:"));
/// ```
pub fn parse_permutations(bytes: &[u8], path: &Path) -> Result<ModePermutations> {
    let error = |line: usize, reason: String| FormatError::Parse {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        error(line, "the file is not UTF-8 text".into())
    })?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(k, l)| (k + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    match lines.next() {
        Some((_, l)) if l.eq_ignore_ascii_case(HEADER) => {}
        Some((n, l)) => return Err(error(n, format!("expected `{HEADER}` first, found `{l}`"))),
        None => return Err(error(1, format!("the file is empty (expected `{HEADER}`)"))),
    }
    let mut lines = lines.filter(|(_, l)| !l.starts_with('%'));
    let (n, l) = lines
        .next()
        .ok_or_else(|| error(2, "expected `modes N`, found the end of the file".into()))?;
    let order = match l.split_whitespace().collect::<Vec<_>>()[..] {
        ["modes", count] => count
            .parse::<usize>()
            .ok()
            .filter(|&c| c <= 64)
            .ok_or_else(|| error(n, format!("`{count}` is not a number of modes (0 to 64)")))?,
        _ => return Err(error(n, format!("expected `modes N`, found `{l}`"))),
    };
    let mut shape = Vec::with_capacity(order);
    let mut modes = Vec::with_capacity(order);
    let mut last_line = n;
    for mode in 1..=order {
        let (n, l) = lines.next().ok_or_else(|| {
            error(
                last_line + 1,
                format!("expected `mode {mode} SIZE`, found the end of the file"),
            )
        })?;
        let words: Vec<&str> = l.split_whitespace().collect();
        let (size_word, unchanged) = match words[..] {
            ["mode", m, size] if m == mode.to_string() => (size, false),
            ["mode", m, size, "unchanged"] if m == mode.to_string() => (size, true),
            _ => {
                return Err(error(
                    n,
                    format!("expected `mode {mode} SIZE [unchanged]`, found `{l}`"),
                ))
            }
        };
        let size: usize = size_word
            .parse()
            .map_err(|_| error(n, format!("`{size_word}` is not a mode size")))?;
        shape.push(size);
        last_line = n;
        if unchanged {
            modes.push(None);
            continue;
        }
        // Refuse absurd sizes before allocating for them: a permuted mode
        // lists one coordinate per line, so the file holds two bytes per
        // coordinate at least.
        if size > crate::coordinates::MAX_POSITIONS {
            return Err(error(n, format!("mode {mode} of size {size} is too large to permute")));
        }
        if size > text.len() / 2 {
            return Err(error(
                n,
                format!("mode {mode} of size {size} is permuted, but the file is too short to list {size} coordinates"),
            ));
        }
        let mut new_to_old = Vec::with_capacity(size.min(1 << 20));
        let mut seen = vec![false; size];
        for k in 1..=size {
            let (n, l) = lines.next().ok_or_else(|| {
                error(
                    last_line + 1,
                    format!(
                        "mode {mode} lists {} of its {size} coordinates, then the file ends",
                        k - 1
                    ),
                )
            })?;
            let old: usize = l
                .parse()
                .ok()
                .filter(|&c| (1..=size).contains(&c))
                .ok_or_else(|| error(n, format!("`{l}` is not a coordinate of mode {mode} (1 to {size})")))?;
            if std::mem::replace(&mut seen[old - 1], true) {
                return Err(error(n, format!("coordinate {old} of mode {mode} is listed twice")));
            }
            new_to_old.push(old - 1);
            last_line = n;
        }
        modes.push(Some(Permutation::from_new_to_old(new_to_old)?));
    }
    if let Some((n, l)) = lines.next() {
        return Err(error(n, format!("unexpected `{l}` after the last mode")));
    }
    ModePermutations::new(&shape, modes)
}
