//! Sparsity pictures of a matrix (`tessera info --spy`, `--spy-png`): the
//! matrix cut into a grid of cells, each shaded by how many nonzeros it
//! holds on a log scale — in the terminal with the block characters
//! `░▒▓█`, or as a grayscale PNG (white empty, black densest).
//!
//! One pass over the entries fills the grid; the grid, not the matrix,
//! decides the memory used.

use std::path::Path;

use tessera_formats::CoordinateList;

use super::error::{CliError, Result};

/// Width of the terminal picture, in characters.
pub const TERMINAL_COLUMNS: usize = 60;
/// Most lines of the terminal picture.
const TERMINAL_LINES: usize = 40;
/// The longer side of a PNG picture, in pixels (less for smaller matrices:
/// a pixel never covers less than one entry).
const PNG_SIDE: usize = 512;

/// Nonzeros per cell of a `height x width` grid over a matrix.
struct Grid {
    /// Row-major, `width` cells a row.
    counts: Vec<u64>,
    /// The largest count.
    most: u64,
}

impl Grid {
    fn of(entries: &CoordinateList<f64>, height: usize, width: usize) -> Grid {
        let (rows, cols) = (entries.shape()[0] as u128, entries.shape()[1] as u128);
        let mut counts = vec![0u64; height * width];
        for (c, _) in entries.iter() {
            // Coordinates are below their dimensions, so cells are in range.
            let y = (u128::from(c[0]) * height as u128 / rows) as usize;
            let x = (u128::from(c[1]) * width as u128 / cols) as usize;
            counts[y * width + x] += 1;
        }
        let most = counts.iter().copied().max().unwrap_or(0);
        Grid { counts, most }
    }

    /// A cell's count on a log scale from 0 (empty) to 1 (the fullest cell);
    /// a cell with one nonzero is above 0.
    fn shade(&self, count: u64) -> f64 {
        let most = self.most;
        match (count, most) {
            (0, _) => 0.0,
            (_, 1) => 1.0,
            _ => (1.0 + (count as f64).ln()) / (1.0 + (most as f64).ln()),
        }
    }
}

/// The grid of at most `width x height_limit` cells that keeps a matrix's
/// aspect, when cells are `aspect` times taller than wide (2 for terminal
/// characters, 1 for pixels); a dimension smaller than the grid gets one
/// cell per row or column.
fn grid_size(rows: usize, cols: usize, width: usize, height_limit: usize, aspect: f64) -> (usize, usize) {
    let (rows_f, cols_f) = (rows.max(1) as f64, cols.max(1) as f64);
    let mut w = width.min(cols).max(1);
    let mut h = ((w as f64 * rows_f / cols_f / aspect).round() as usize).clamp(1, height_limit);
    if h == height_limit {
        w = ((h as f64 * aspect * cols_f / rows_f).round() as usize).clamp(1, w);
    }
    h = h.min(rows.max(1));
    (h, w)
}

/// The terminal picture of a matrix, framed, with a line saying what a
/// character covers.
pub fn terminal_picture(entries: &CoordinateList<f64>, columns: usize) -> String {
    const SHADES: [char; 5] = [' ', '░', '▒', '▓', '█'];
    let (rows, cols) = (entries.shape()[0], entries.shape()[1]);
    let (height, width) = grid_size(rows, cols, columns, TERMINAL_LINES, 2.0);
    let grid = Grid::of(entries, height, width);
    let mut text = format!("spy ({rows} x {cols}):\n┌{}┐\n", "─".repeat(width));
    for y in 0..height {
        text.push('│');
        for x in 0..width {
            let shade = grid.shade(grid.counts[y * width + x]);
            let level = if shade == 0.0 {
                0
            } else {
                ((shade * 4.0).ceil() as usize).clamp(1, 4)
            };
            text.push(SHADES[level]);
        }
        text.push_str("│\n");
    }
    text.push_str(&format!("└{}┘\n", "─".repeat(width)));
    text.push_str(&format!(
        "  each character: about {} x {} entries; ░▒▓█ by nonzeros on a log scale, █ = {}\n",
        short_extent(rows, height),
        short_extent(cols, width),
        grid.most
    ));
    text
}

/// Rows (or columns) per cell, as text.
fn short_extent(size: usize, cells: usize) -> String {
    let per = size as f64 / cells.max(1) as f64;
    if per >= 10.0 {
        format!("{}", per.round())
    } else {
        format!("{:.1}", per)
    }
}

/// Writes the PNG picture of a matrix to `path` (replacing it only once
/// complete); returns its width and height in pixels.
pub fn write_png(entries: &CoordinateList<f64>, path: &Path) -> Result<(usize, usize)> {
    let context = format!("--spy-png {}", path.display());
    let (rows, cols) = match *entries.shape() {
        [rows, cols] => (rows, cols),
        _ => {
            return Err(CliError::bad(
                &context,
                format!(
                    "pictures are drawn for matrices, this tensor has order {}",
                    entries.order()
                ),
            ))
        }
    };
    let (height, width) = grid_size(rows, cols, PNG_SIDE.min(cols.max(1)), PNG_SIDE, 1.0);
    let grid = Grid::of(entries, height, width);
    // White for empty cells; nonempty ones from light gray (one nonzero in
    // the fullest of grids) to black, so a lone entry stays visible.
    let pixels: Vec<u8> = grid
        .counts
        .iter()
        .map(|&count| {
            let shade = grid.shade(count);
            if shade == 0.0 {
                255
            } else {
                (200.0 * (1.0 - shade)).round() as u8
            }
        })
        .collect();
    let mut encoded = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut encoded, width as u32, height as u32);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| CliError::bad(&context, format!("encoding the picture: {e}")))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| CliError::bad(&context, format!("encoding the picture: {e}")))?;
    }
    tessera_formats::io::replace_file(path, |w| w.write_all(&encoded).and_then(|()| w.flush()))
        .map_err(|source| CliError::File { context, source })?;
    Ok((width, height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_keep_the_aspect_within_their_limits() {
        // A square matrix: 60 characters wide, 30 lines (characters are twice as tall).
        assert_eq!(grid_size(1000, 1000, 60, 40, 2.0), (30, 60));
        // Tall: the line limit narrows the picture.
        assert_eq!(grid_size(10_000, 100, 60, 40, 2.0), (40, 1));
        // Small: one cell per row and column at most.
        assert_eq!(grid_size(3, 4, 60, 40, 2.0), (2, 4));
        assert_eq!(grid_size(4884, 4884, 512, 512, 1.0), (512, 512));
    }

    #[test]
    fn a_diagonal_matrix_is_drawn_on_the_diagonal() {
        let mut entries = CoordinateList::new(&[120, 120]);
        for i in 0..120 {
            entries.push(&[i, i], 1.0).unwrap();
        }
        let picture = terminal_picture(&entries, 60);
        let lines: Vec<&str> = picture.lines().collect();
        // Title, top frame, 30 lines, bottom frame, legend.
        assert_eq!(lines.len(), 34);
        for (y, line) in lines[2..32].iter().enumerate() {
            let cells: Vec<char> = line.chars().skip(1).take(60).collect();
            // Cell (y, x) covers rows 4y..4y+3 and columns 2x..2x+1.
            for (x, &cell) in cells.iter().enumerate() {
                assert_eq!(cell != ' ', x / 2 == y, "line {y}, column {x}: {line}");
            }
        }
    }
}
