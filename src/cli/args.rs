//! The command line: subcommands and options as clap parses them, and the
//! parsers of `NAME:VALUE` option values (`-i A:a.mtx`, `-f A:csr`).
//!
//! Values are checked here as far as they can be without data (a format's
//! spelling, a density's range); what depends on a tensor (a format's order)
//! is checked when the tensor exists.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::engine::Tier;
use super::format_spec::FormatSpec;
use super::generate::GenSpec;
use tessera_engine::notation::Semiring;
use tessera_engine::schedule::Schedule;
use tessera_formats::reorder::Method;
use tessera_formats::ValueType;

const ABOUT: &str = "Sparse tensor algebra from the command line: type a statement, get a result";

const EXAMPLES: &str = "\
Examples:
  tessera eval \"y(i) = A(i,j) * x(j)\" -i A:data/4elt.mtx -g x:15606:1
  tessera eval \"C(i,j) = A(i,k) * B(k,j)\" -g A:500x400:0.01 -g B:400x300:0.02 -f C:dcsr --print plan
  tessera eval \"s = A(i,j) * A(i,j)\" -i A:data/4elt.mtx --time 10
  tessera repl -i A:data/4elt.mtx
  tessera convert data/4elt.mtx 4elt.tns
  tessera info data/4elt.mtx
  tessera reorder data/4elt.mtx 4elt-rcm.mtx --method rcm --save-permutation 4elt.perm
  tessera eval \"y(i) = A(i,j) * x(j)\" -i A:data/4elt.mtx -g x:15606:1 --reorder lexi --time 10";

/// `tessera`: evaluate sparse tensor statements, interactively or not.
#[derive(Debug, Parser)]
#[command(name = "tessera", version, about = ABOUT, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate one statement and print or write its result
    #[command(after_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// Evaluate statements one after another (from a terminal or a pipe)
    Repl(ReplArgs),
    /// Convert a tensor file into another (.mtx, .tns, binsparse .h5), through a format
    Convert(ConvertArgs),
    /// Describe a tensor file: shape, nonzeros, row lengths, symmetry, suggested formats, bytes per format
    Info(InfoArgs),
    /// Reorder a tensor file's coordinates (lexi, rcm, degree): bandwidth and profile before and after
    #[command(after_help = REORDER_HELP)]
    Reorder(ReorderArgs),
}

const REORDER_HELP: &str = "\
Methods: lexi (COMET's lexi-order, every mode, any order), rcm (reverse
Cuthill-McKee of the symmetric structure, one permutation for rows and
columns, square matrices), degree (each mode by its slices' entry counts,
heaviest first). A saved permutation (--save-permutation) is reused with
--permutation here or with `tessera eval --reorder-from NAME:PATH`.";

const EVAL_HELP: &str = "\
Statements are index notation: y(i) = A(i,j) * x(j), C(i,j) = A(i,j) + B(i,j),
s = sum(i, x(i) * x(i)); indices on the right but not the left are summed.

Functions: sqrt cbrt exp log log10 pow abs sin cos tan asin acos atan atan2
sinh cosh tanh asinh acosh atanh min max mod square cube heaviside xor, and for
complex values real imag conj.
Comparisons < <= > >= == != give bool values; && || ! xor take any nonzero as
true and give bool.
Value types: f64 (the default), f32, i64, i32, bool, c64; -t A:f32 holds A's
values as f32, -t A:i64 reads A's file as exact integers (-g gives integers 1
to 9), -t A:c64 as complex values (a .mtx complex or hermitian file; a .tns file
with two numbers, real and imaginary parts, after each line's coordinates).
Operands of different types need a cast: f64(e), f32(e), i64(e), i32(e), bool(e),
c64(e); real(e), imag(e) and abs(e) of a complex value are real, conj(e) complex.
Results have the statement's type: f32 computed in f64 and rounded once where
stored; i64 and i32 exactly, with wrapping arithmetic (division by 0 gives 0);
bool + and * are || and &&, sum over bool is or; c64 in complex arithmetic, its
results written as complex files.
Reductions: sum(j, e), prod(j, e), min(j, e), max(j, e), or(j, e), and(j, e):
y(i) = min(j, A(i,j) + d(j)). Where operands are absent (0), a function's
result follows from its value there: sqrt(A(i,j)) stays sparse, exp(A(i,j))
is computed at every coordinate.

Formats (-f): dense, csr, csc, dcsr, dcsc, coo, ucoo, csf, dia, ell, bcsr:RxC, sv, hash,
or a level list such as dense,compressed or compressed(nonunique),singleton,
optionally with a mode order: dense,compressed:1,0. Inputs default to CSR for a
matrix, CSF for a higher-order tensor, dense for a dense file; the output is
dense when every input is dense, else like its sparse inputs.

Without -o, a summary of the result is printed (a scalar is printed as a number).";

/// Tensors, formats and sizes given on the command line.
#[derive(Debug, Args)]
pub struct TensorArgs {
    /// Read tensor NAME from a .mtx, .tns or binsparse .h5 file
    #[arg(short = 'i', long = "input", value_name = "NAME:PATH", value_parser = parse_input)]
    pub inputs: Vec<NameValue<PathBuf>>,

    /// Generate a random tensor NAME (DIMS like 1000x1000, DENSITY from 0 to 1)
    #[arg(short = 'g', long = "generate", value_name = "NAME:DIMS:DENSITY[:SEED]", value_parser = parse_generated)]
    pub generated: Vec<NameValue<GenSpec>>,

    /// Store tensor NAME (an input or the output) in FORMAT
    #[arg(short = 'f', long = "format", value_name = "NAME:FORMAT", value_parser = parse_format)]
    pub formats: Vec<NameValue<FormatSpec>>,

    /// Hold tensor NAME's values as TYPE (f64, f32, i64, i32, bool, c64). An input's file is read as
    /// it: i64 and i32 exactly (each value must be an integer the type holds: a fraction or a value
    /// beyond its range is an error naming the line), f32 rounded, bool nonzero as true (a pattern
    /// file is all true), c64 complex (a .mtx complex or hermitian file; a .tns file with two
    /// numbers, real and imaginary parts, after each line's coordinates; a real file with imaginary
    /// parts 0), and a complex file only as c64; a generated input (-g) as i64 or i32 holds integers
    /// from 1 to 9 (ceil(9v) of its values v in (0, 1]), as c64 real parts those of f64 with the
    /// same seed and imaginary parts in (0, 1] from the seed xor 0x9e3779b97f4a7c15. For the
    /// output, the type the statement must give
    #[arg(short = 't', long = "type", value_name = "NAME:TYPE", value_parser = parse_named_type)]
    pub types: Vec<NameValue<ValueType>>,

    /// Size of an index variable that no input fixes
    #[arg(short = 'd', long = "dim", value_name = "VAR:SIZE", value_parser = parse_size)]
    pub sizes: Vec<NameValue<usize>>,

    /// The value of tensor NAME's components that are not stored (default 0; inf for distances)
    #[arg(long = "fill", value_name = "NAME:VALUE", value_parser = parse_named_fill)]
    pub fills: Vec<NameValue<f64>>,

    /// Execution tier (opencl: in builds with the feature `opencl`, on an OpenCL device)
    #[arg(long, value_enum, default_value_t = Tier::Auto)]
    pub tier: Tier,

    /// Threads a kernel may use (default: every core for kernels with enough work); results are the
    /// same bits for any number
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,

    /// Schedule of the statement's loops, commands separated by `;`: reorder(i, k, j); split(i, i0,
    /// i1, 32); divide(i, i0, i1, 4); fuse(i, j, f); pos(f, fp, A); unroll(i1, 4); bound(i, ib, 100[,
    /// max_exact|max_constraint]); precompute(expr, j, j, w) (expr: the right-hand side or factors
    /// of its product); parallelize(i0, cpu_threads,
    /// no_races|atomics|temporary|ignore_races); parallelize(k, cpu_vector,
    /// ignore_races|parallel_reduction)
    #[arg(short = 's', long, value_name = "COMMANDS", value_parser = parse_schedule)]
    pub schedule: Option<Schedule>,
}

fn parse_semiring(text: &str) -> Result<Semiring, String> {
    text.parse()
}

fn parse_schedule(text: &str) -> Result<Schedule, String> {
    text.parse().map_err(|e: tessera_engine::EngineError| e.to_string())
}

/// What `--print` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrintWhat {
    /// Formats chosen, loop order, lattices, concrete index notation
    Plan,
    /// The merge lattice of each loop
    Lattice,
    /// The bytecode program
    Bytecode,
    /// Cranelift IR (jit tier)
    Clif,
    /// OpenCL source (opencl tier)
    Opencl,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The statement, such as "y(i) = A(i,j) * x(j)"
    pub statement: String,

    #[command(flatten)]
    pub tensors: TensorArgs,

    /// Write the result NAME to a .mtx (order <= 2) or .tns file
    #[arg(short = 'o', long = "output", value_name = "NAME:PATH", value_parser = parse_input)]
    pub output: Option<NameValue<PathBuf>>,

    /// Run N times; report the minimum and median time and the tier that ran
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub time: Option<u32>,

    /// Print the plan, lattices or bytecode before the result (repeatable, or comma-separated)
    #[arg(long, value_enum, value_name = "WHAT", value_delimiter = ',')]
    pub print: Vec<PrintWhat>,

    /// Run on inputs reordered by METHOD (lexi, rcm, degree); the result is permuted back
    #[arg(long, value_name = "METHOD", value_parser = parse_method)]
    pub reorder: Option<Method>,

    /// Run on inputs reordered by a permutation of tensor NAME saved by `tessera reorder`
    #[arg(long, value_name = "NAME:PATH", value_parser = parse_input, conflicts_with = "reorder")]
    pub reorder_from: Option<NameValue<PathBuf>>,

    /// Read the statement in a semiring (min-plus, max-plus, max-times, or-and): `*` and `+` become
    /// its operations, sums its reduction, and inputs without --fill get its zero as fill
    #[arg(long, value_name = "SEMIRING", value_parser = parse_semiring)]
    pub semiring: Option<Semiring>,

    /// Define an operator the statement calls, in the statement language (repeatable):
    /// --def 'softplus(x) = log(1 + exp(x))'; it is compiled inline, on every tier
    #[arg(long = "def", value_name = "DEFINITION")]
    pub defs: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReorderArgs {
    /// The file to read (.mtx, .tns or binsparse .h5)
    pub input: PathBuf,
    /// The file to write, reordered (.mtx for order <= 2, .tns for any order)
    pub output: PathBuf,
    /// The ordering: lexi, rcm or degree
    #[arg(short = 'm', long, value_name = "METHOD", value_parser = parse_method, default_value = "lexi")]
    pub method: Method,
    /// Apply this saved permutation instead of computing one
    #[arg(long, value_name = "PATH", conflicts_with = "method")]
    pub permutation: Option<PathBuf>,
    /// Save the permutation to PATH, to reuse it
    #[arg(long, value_name = "PATH")]
    pub save_permutation: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReplArgs {
    #[command(flatten)]
    pub tensors: TensorArgs,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The file to read (.mtx, .tns or binsparse .h5)
    pub input: PathBuf,
    /// The file to write (.mtx for order <= 2, .tns for any order)
    pub output: PathBuf,
    /// Pack the tensor in FORMAT on the way (checks it can hold it, reports its size)
    #[arg(short = 'f', long = "format", value_name = "FORMAT", value_parser = parse_spec)]
    pub format: Option<FormatSpec>,
    /// Write a .mtx file as `real general` (`integer general` for i64 or i32 values, `complex
    /// general` for c64), both triangles, without the input's comments (by default its field,
    /// symmetry and comments are kept where the data allows)
    #[arg(long)]
    pub general: bool,
    /// Read and write the values as TYPE (f64, f32, i64, i32, bool, c64): i64 and i32 exactly
    /// (each value must be an integer the type holds), c64 as complex values. Default: f64, c64 for
    /// a complex file (a .mtx complex one, a .tns one whose .dims sidecar shows two numbers a
    /// value), and i64 for a Matrix Market integer file holding integers beyond 2^53, which f64
    /// would round
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = parse_type)]
    pub value_type: Option<ValueType>,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The file to describe (.mtx, .tns or binsparse .h5)
    pub path: PathBuf,
    /// Draw the matrix's sparsity picture in the terminal (shaded block characters)
    #[arg(long)]
    pub spy: bool,
    /// Write the matrix's sparsity picture to a PNG file (at most 512 pixels a side)
    #[arg(long, value_name = "PATH")]
    pub spy_png: Option<PathBuf>,
    /// Read the values as TYPE: c64 for a .tns file of complex values (two numbers after each
    /// line's coordinates) without a .dims sidecar. Default: c64 for a complex file (a .mtx complex
    /// one, a .tns one whose sidecar shows two numbers a value), else f64; real types are
    /// described alike
    #[arg(short = 't', long = "type", value_name = "TYPE", value_parser = parse_type)]
    pub value_type: Option<ValueType>,
}

/// An option value `NAME:VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct NameValue<T> {
    pub name: String,
    pub value: T,
}

/// Whether `name` can name a tensor or index variable in a statement.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Splits `NAME:REST` at the first colon, checking the name.
pub fn split_name<'a>(text: &'a str, what: &str) -> Result<(&'a str, &'a str), String> {
    let (name, rest) = text
        .split_once(':')
        .ok_or_else(|| format!("expected NAME:{what}, found no `:`"))?;
    let name = name.trim();
    if !is_identifier(name) {
        return Err(format!(
            "`{name}` is not a name: names start with a letter or _ and go on with letters, digits or _"
        ));
    }
    if rest.trim().is_empty() {
        return Err(format!("expected NAME:{what}, found nothing after `{name}:`"));
    }
    Ok((name, rest.trim()))
}

fn parse_input(text: &str) -> Result<NameValue<PathBuf>, String> {
    let (name, path) = split_name(text, "PATH")?;
    Ok(NameValue {
        name: name.into(),
        value: PathBuf::from(path),
    })
}

fn parse_generated(text: &str) -> Result<NameValue<GenSpec>, String> {
    let (name, spec) = split_name(text, "DIMS:DENSITY[:SEED]")?;
    Ok(NameValue {
        name: name.into(),
        value: GenSpec::parse(spec)?,
    })
}

fn parse_format(text: &str) -> Result<NameValue<FormatSpec>, String> {
    let (name, spec) = split_name(text, "FORMAT")?;
    Ok(NameValue {
        name: name.into(),
        value: spec.parse()?,
    })
}

fn parse_method(text: &str) -> Result<Method, String> {
    text.parse()
}

fn parse_spec(text: &str) -> Result<FormatSpec, String> {
    text.parse()
}

/// A non-negative size `1000`.
pub fn parse_count(text: &str) -> Result<usize, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("bad size `{}`: expected a non-negative integer", text.trim()))
}

fn parse_type(text: &str) -> Result<ValueType, String> {
    text.trim().parse()
}

fn parse_named_type(text: &str) -> Result<NameValue<ValueType>, String> {
    let (name, value) = split_name(text, "TYPE")?;
    Ok(NameValue {
        name: name.into(),
        value: value.trim().parse()?,
    })
}

fn parse_named_fill(text: &str) -> Result<NameValue<f64>, String> {
    let (name, value) = split_name(text, "VALUE")?;
    Ok(NameValue {
        name: name.into(),
        value: parse_fill(value)?,
    })
}

/// A fill value: a number, `inf` or `-inf`.
pub fn parse_fill(text: &str) -> Result<f64, String> {
    match text.trim() {
        "inf" | "+inf" => Ok(f64::INFINITY),
        "-inf" => Ok(f64::NEG_INFINITY),
        v => v
            .parse()
            .map_err(|_| format!("bad fill `{v}`: expected a number, inf or -inf")),
    }
}

fn parse_size(text: &str) -> Result<NameValue<usize>, String> {
    let (name, size) = split_name(text, "SIZE")?;
    Ok(NameValue {
        name: name.into(),
        value: parse_count(size)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn name_value_options_check_the_name() {
        assert_eq!(parse_size("k:10").unwrap().value, 10);
        assert!(parse_size("k10").unwrap_err().contains("no `:`"));
        assert!(parse_input("1A:x.mtx").unwrap_err().contains("`1A` is not a name"));
        assert!(parse_input("A:").unwrap_err().contains("nothing after"));
        assert!(parse_format("A:csrr").unwrap_err().contains("`csrr`"));
    }
}
