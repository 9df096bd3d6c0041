//! The `tessera` command: `eval`, `repl`, `convert`, `info` and `reorder`.
//!
//! [`main`] parses the command line ([`args`]), runs the subcommand, and
//! turns any [`CliError`] into one line on standard error and a non-zero
//! exit (1 for a failure, 2 for a command line clap rejects). Subcommands
//! write their output to a `dyn Write` so that a closed pipe ends them
//! quietly instead of panicking.
//!
//! Modules: [`args`] (the command line), [`format_spec`] (`-f` values),
//! [`generate`] (`-g`), [`files`] (reading and writing by extension),
//! [`session`] (named tensors and statements), [`listing`] (`--print`),
//! [`summary`] (result summaries), [`types`] (value types asked for
//! tensors), [`engine`] (tiers), [`progress`] (spinners), [`complete`] (Tab
//! in the REPL), and one module per subcommand.

pub mod args;
pub mod complete;
pub mod convert;
pub mod engine;
pub mod error;
pub mod eval;
pub mod files;
/// The `-f` syntax, which the library parses (`Format: FromStr`).
pub use tessera_formats::spec as format_spec;
pub mod generate;
pub mod info;
pub mod listing;
pub mod progress;
pub mod reorder;
pub mod repl;
pub mod session;
pub mod spy;
pub mod summary;
pub mod types;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

use args::{Cli, Command};
use error::CliError;

/// Runs the command line of this process.
pub fn main() -> ExitCode {
    quiet_panics();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e),
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::Eval(args) => eval::run(&args, &mut out),
        Command::Repl(args) => repl::run(&args, &mut out),
        Command::Convert(args) => convert::run(&args, &mut out),
        Command::Info(args) => info::run(&args, &mut out),
        Command::Reorder(args) => reorder::run(&args, &mut out),
    };
    let result = result.and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match result {
        Ok(code) => code,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            report(&e);
            ExitCode::FAILURE
        }
    }
}

/// A panic is a bug in tessera, never the user's mistake: say so in one
/// line instead of Rust's message and backtrace hint. With `RUST_BACKTRACE`
/// set, Rust's own report is kept for debugging.
fn quiet_panics() {
    if std::env::var_os("RUST_BACKTRACE").is_some() {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!(" ({}:{})", l.file(), l.line()))
            .unwrap_or_default();
        let message = message.replace('\n', " ");
        let _ = writeln!(
            io::stderr(),
            "error: internal error, a bug in tessera (please report the command): {message}{at}"
        );
    }));
}

/// Prints an error as one line on standard error.
pub fn report(error: &CliError) {
    let text = error.to_string().replace('\n', " ");
    let _ = writeln!(io::stderr(), "error: {text}");
}

/// Help and version go to standard output; other clap errors become one
/// line on standard error and exit code 2.
fn clap_error(e: &clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(2)
        }
        _ => {
            // The first paragraph, which may list missing arguments on
            // lines of their own, as one line.
            let rendered = e.render().to_string();
            let first: Vec<&str> = rendered
                .trim_start()
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            let first = first.join(" ");
            let first = first.strip_prefix("error: ").unwrap_or(&first);
            let _ = writeln!(io::stderr(), "error: {first} (see --help)");
            ExitCode::from(2)
        }
    }
}
