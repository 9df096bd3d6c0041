//! `tessera repl`: a session of statements and commands, one per line.
//!
//! A line is a statement (`y(i) = A(i,j) * x(j)`: evaluated, its summary
//! printed, its result kept as a tensor for later lines), a command
//! (`:load`, `:gen`, `:format`, `:plan`, `:time`, … — see [`HELP`]), a
//! comment (`# …`) or blank. From a terminal, lines are edited with
//! rustyline (Tab completes commands, the session's tensor names and file
//! paths: [`super::complete`]) and kept in a history file; from a pipe, lines are read as
//! they come, without prompts, so sessions can be scripted. An error is
//! reported (with its line number, from a pipe) and the session goes on;
//! a piped session with errors exits non-zero at its end.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;
use tessera_engine::notation::{register_operator, Operator};
use tessera_engine::schedule::Schedule;

use super::args::{is_identifier, parse_count, parse_fill, PrintWhat, ReplArgs};
use super::complete::ReplHelper;
use super::error::{CliError, Result};
use super::eval::timing_line;
use super::files;
use super::format_spec::FormatSpec;
use super::generate::{shape_text, GenSpec};
use super::listing::write_listing;
use super::session::{from_args, of_type, Front, Session};
use super::summary::{write_named, SHOWN_NONZEROS};

/// The commands, as `:help` prints them.
pub const HELP: &str = "\
Statements, one per line, are evaluated and their results kept by name:
  y(i) = A(i,j) * x(j)          C(i,j) = A(i,k) * B(k,j)          s = sum(i, y(i))
Commands:
  :load NAME PATH               read a .mtx, .tns or .h5 file
  :gen NAME DIMS DENSITY [SEED] random tensor, e.g. :gen A 1000x1000 0.01 7
  :format NAME FORMAT           store NAME in FORMAT (now, or when it is made):
                                dense csr csc dcsr dcsc coo ucoo csf dia ell bcsr:RxC sv hash,
                                or levels such as dense,compressed:1,0
  :size VAR SIZE                size of an index variable no input fixes
  :fill NAME VALUE              the value of NAME's unstored components (inf for distances):
                                y(i) = min(j, A(i,j) + x(j)) with A and x filled with inf
                                runs over their entries only
  :type NAME TYPE               hold NAME's values as f64, f32, i64, i32, bool or c64 (now, or when it is made;
                                a file is read as it, i64 and i32 exactly, a complex file only as c64)
  :semiring [NAME|none]         read later statements in a semiring (min-plus, max-plus, max-times, or-and):
                                * and + become its operations, sums its reduction, and the tensors they read
                                take its zero as fill unless :fill gave theirs
  :def NAME(x, y) = EXPRESSION  an operator later statements call: :def softplus(x) = log(1 + exp(x))
  :threads [N|auto]             threads kernels may use (results are the same bits for any N)
  :schedule [COMMANDS|none]     schedule of later statements, e.g. reorder(i, k, j); parallelize(i, cpu_threads, no_races)
                                or fuse(i, j, f); pos(f, p, A); split(p, p0, p1, 16); parallelize(p0, cpu_threads, atomics)
                                or split(i, i0, i1, 16); reorder(i0, i1, k, j); parallelize(j, cpu_vector, ignore_races)
  :print NAME [N|all]           summary and the first N (10) nonzeros
  :list                         the tensors, formats and sizes of the session
  :save NAME PATH               write NAME to a .mtx, .tns or .h5 file
  :drop NAME                    forget a tensor
  :plan STATEMENT               formats chosen and the plan, without running
  :lattice STATEMENT            the merge lattice of each loop
  :bytecode STATEMENT           the bytecode program
  :time N STATEMENT             run N times: min and median time, the tier
  :help                         this text
  :quit                         leave (or end of input, Ctrl-D)
A tensor's name alone prints it; help and quit work without the colon.
In a terminal, Tab completes commands, tensor names and file paths.
Lines starting with # are comments.";

/// What to do after a line.
enum Flow {
    Continue,
    Quit,
}

/// Runs `tessera repl`.
pub fn run(args: &ReplArgs, out: &mut dyn Write) -> Result<ExitCode> {
    let mut session = from_args(&args.tensors, Front::Repl)?;
    // Ctrl-C while a statement runs interrupts it (its kernel stops before
    // its next chunk) and keeps the session; at the prompt the line editor
    // reads it as a key.
    let cancel = session.cancel_token();
    ctrlc::set_handler(move || cancel.cancel()).map_err(|e| CliError::Editor(format!("handling Ctrl-C: {e}")))?;
    if io::stdin().is_terminal() {
        interactive(&mut session, out)?;
        Ok(ExitCode::SUCCESS)
    } else {
        piped(&mut session, out)
    }
}

/// Lines from a pipe: no prompt; errors name their line.
fn piped(session: &mut Session, out: &mut dyn Write) -> Result<ExitCode> {
    let mut failed = false;
    for (k, line) in io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|e| CliError::Editor(format!("reading standard input: {e}")))?;
        match execute(session, &line, out) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => break,
            Err(e) if e.is_broken_pipe() => return Err(e),
            Err(e) if e.is_interrupt() => {
                let _ = writeln!(io::stderr(), "line {}: interrupted; the session goes on", k + 1);
            }
            Err(e) => {
                failed = true;
                let _ = writeln!(io::stderr(), "error: line {}: {e}", k + 1);
            }
        }
        out.flush()?;
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Lines from a terminal, with editing and history.
fn interactive(session: &mut Session, out: &mut dyn Write) -> Result<()> {
    let mut editor: Editor<ReplHelper, DefaultHistory> = Editor::new().map_err(|e| CliError::Editor(e.to_string()))?;
    editor.set_helper(Some(ReplHelper::default()));
    let history = history_path();
    if let Some(path) = &history {
        // No history yet is the usual first run.
        let _ = editor.load_history(path);
    }
    writeln!(
        out,
        "tessera {} ({} tier) - :help for commands, :quit to leave",
        env!("CARGO_PKG_VERSION"),
        session.tier()
    )?;
    out.flush()?;
    loop {
        // Tab completes the names of the session as it is now.
        if let Some(helper) = editor.helper_mut() {
            helper.names = session.tensors().map(|(name, _)| name.to_string()).collect();
        }
        match editor.readline("tessera> ") {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                let flow = execute(session, &line, out);
                out.flush()?;
                match flow {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Quit) => break,
                    Err(e) if e.is_broken_pipe() => return Err(e),
                    Err(e) if e.is_interrupt() => {
                        let _ = writeln!(io::stderr(), "interrupted; the session goes on");
                    }
                    Err(e) => super::report(&e),
                }
            }
            // Ctrl-C abandons the line, as in a shell.
            Err(ReadlineError::Interrupted) => {}
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(CliError::Editor(e.to_string())),
        }
    }
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    Ok(())
}

/// `$HOME/.tessera_history`, when there is a home.
fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".tessera_history"))
}

/// Carries out one line.
fn execute(session: &mut Session, line: &str, out: &mut dyn Write) -> Result<Flow> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(Flow::Continue);
    }
    let Some(command) = line.strip_prefix(':') else {
        // A tensor's name alone shows it, as `:print`; the words people
        // type for help and leaving work without the colon.
        if let Some(named) = session.get(line) {
            write_named(out, line, &named.tensor, SHOWN_NONZEROS)?;
            return Ok(Flow::Continue);
        }
        return match line {
            "help" | "?" => {
                writeln!(out, "{HELP}")?;
                Ok(Flow::Continue)
            }
            "quit" | "exit" => Ok(Flow::Quit),
            _ => {
                evaluate(session, line, None, out)?;
                Ok(Flow::Continue)
            }
        };
    };
    let (word, rest) = match command.split_once(char::is_whitespace) {
        Some((w, r)) => (w, r.trim()),
        None => (command, ""),
    };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let context = format!(":{word}");
    let usage = |text: &str| CliError::bad(&context, format!("usage: {text}"));
    match word {
        "q" | "quit" | "exit" => return Ok(Flow::Quit),
        "h" | "help" | "?" => writeln!(out, "{HELP}")?,
        "load" => {
            let [name, path] = words[..] else {
                return Err(usage(":load NAME PATH"));
            };
            let name = tensor_name(name, &context)?;
            session.load(name, Path::new(path), &format!(":load {name}"))?;
            header(session, name, out)?;
        }
        "gen" | "generate" => {
            let (name, dims, density, seed) = match words[..] {
                [n, d, p] => (n, d, p, None),
                [n, d, p, s] => (n, d, p, Some(s)),
                _ => return Err(usage(":gen NAME DIMS DENSITY [SEED]")),
            };
            let name = tensor_name(name, &context)?;
            let spec = GenSpec::from_parts(dims, density, seed)
                .map_err(|reason| CliError::bad(format!(":gen {name}"), reason))?;
            session.generate(name, &spec, &format!(":gen {name}"))?;
            header(session, name, out)?;
        }
        "format" => {
            let Some((name, spec)) = rest.split_once(char::is_whitespace) else {
                return Err(usage(":format NAME FORMAT"));
            };
            let name = tensor_name(name, &context)?;
            let spec: FormatSpec = spec
                .trim()
                .parse()
                .map_err(|reason| CliError::bad(format!(":format {name}"), reason))?;
            session.set_format(name, spec.clone())?;
            match session.get(name) {
                Some(_) => header(session, name, out)?,
                None => writeln!(out, "{name} will be stored as {spec}")?,
            }
        }
        "threads" => match words[..] {
            [] => match session.threads() {
                Some(n) => writeln!(out, "kernels use {n} thread{}", if n == 1 { "" } else { "s" })?,
                None => writeln!(out, "kernels use every core when they have enough work")?,
            },
            ["auto"] => session.set_threads(None),
            [n] => {
                let n = parse_count(n)
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| usage(":threads N|auto, N at least 1"))?;
                session.set_threads(Some(n));
            }
            _ => return Err(usage(":threads N|auto")),
        },
        "schedule" => match rest.trim() {
            "" if session.schedule().is_empty() => writeln!(out, "statements use the default schedule")?,
            "" => writeln!(out, "schedule: {}", session.schedule())?,
            "none" => session.set_schedule(Schedule::new()),
            text => {
                let schedule: Schedule = text
                    .parse()
                    .map_err(|e: tessera_engine::EngineError| CliError::bad(":schedule", e.to_string()))?;
                session.set_schedule(schedule);
            }
        },
        "semiring" => match words[..] {
            [] => match session.semiring() {
                Some(semiring) => writeln!(out, "statements are read in {semiring}")?,
                None => writeln!(out, "statements are read as written")?,
            },
            ["none"] => session.set_semiring(None),
            [name] => {
                let semiring = name.parse().map_err(|why: String| CliError::bad(&context, why))?;
                session.set_semiring(Some(semiring));
            }
            _ => return Err(usage(":semiring [NAME|none]")),
        },
        "def" => {
            if rest.is_empty() {
                return Err(usage(":def NAME(x, y) = EXPRESSION"));
            }
            let (name, arity) = define_operator(rest, &context)?;
            let s = if arity == 1 { "" } else { "s" };
            writeln!(out, "{name}: an operator of {arity} argument{s}, compiled inline")?;
        }
        "fill" => {
            let [name, value] = words[..] else {
                return Err(usage(":fill NAME VALUE"));
            };
            let name = tensor_name(name, &context)?;
            let fill = parse_fill(value).map_err(|reason| CliError::bad(&context, reason))?;
            session.set_fill(name, fill, &format!(":fill {name}"))?;
            header(session, name, out)?;
        }
        "type" => {
            let [name, ty] = words[..] else {
                return Err(usage(":type NAME TYPE"));
            };
            let name = tensor_name(name, &context)?;
            let ty = ty.parse().map_err(|reason: String| CliError::bad(&context, reason))?;
            session.set_type(name, ty, &format!(":type {name}"))?;
            header(session, name, out)?;
        }
        "size" => {
            let [var, size] = words[..] else {
                return Err(usage(":size VAR SIZE"));
            };
            let var = tensor_name(var, &context)?;
            let size = parse_count(size).map_err(|reason| CliError::bad(&context, reason))?;
            session.set_size(var, size);
        }
        "print" | "p" => {
            let (name, limit) = match words[..] {
                [name] => (name, SHOWN_NONZEROS),
                [name, "all"] => (name, usize::MAX),
                [name, n] => (name, parse_count(n).map_err(|reason| CliError::bad(&context, reason))?),
                _ => return Err(usage(":print NAME [N|all]")),
            };
            let named = session
                .get(name)
                .ok_or_else(|| CliError::bad(&context, format!("no tensor {name}")))?;
            write_named(out, name, &named.tensor, limit)?;
        }
        "list" | "ls" | "tensors" => list(session, out)?,
        "save" => {
            let [name, path] = words[..] else {
                return Err(usage(":save NAME PATH"));
            };
            let named = session
                .get(name)
                .ok_or_else(|| CliError::bad(&context, format!("no tensor {name}")))?;
            files::write(Path::new(path), named.tensor.as_ref(), &format!(":save {name}"))?;
        }
        "drop" => {
            let [name] = words[..] else {
                return Err(usage(":drop NAME"));
            };
            if !session.remove(name) {
                return Err(CliError::bad(&context, format!("no tensor {name}")));
            }
        }
        "plan" | "lattice" | "bytecode" => {
            if rest.is_empty() {
                return Err(usage(&format!(":{word} STATEMENT")));
            }
            let what = match word {
                "plan" => PrintWhat::Plan,
                "lattice" => PrintWhat::Lattice,
                _ => PrintWhat::Bytecode,
            };
            let prepared = session.prepare(rest)?;
            write_listing(out, session, &prepared, what)?;
        }
        "time" => {
            let Some((n, statement)) = rest.split_once(char::is_whitespace) else {
                return Err(usage(":time N STATEMENT"));
            };
            let n = parse_count(n)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| usage(":time N STATEMENT, N at least 1"))?;
            evaluate(session, statement.trim(), Some(n), out)?;
        }
        other => return Err(CliError::bad(format!(":{other}"), "unknown command (:help lists them)")),
    }
    Ok(Flow::Continue)
}

/// Evaluates a statement (`times` runs when timed), keeps and summarises
/// its result.
fn evaluate(session: &mut Session, statement: &str, times: Option<usize>, out: &mut dyn Write) -> Result<()> {
    session.cancel_token().reset();
    let prepared = session.prepare(statement)?;
    let (result, timing) = match times {
        Some(n) => {
            let (result, timing) = session.time(&prepared, n)?;
            (result, Some(timing))
        }
        None => (session.run(&prepared)?, None),
    };
    // On stderr, once per kernel, as `tessera eval` says it.
    for diagnostic in session.new_diagnostics(&prepared) {
        eprintln!("note: {diagnostic}");
    }
    let name = prepared.output_name().to_string();
    write_named(out, &name, &result, SHOWN_NONZEROS)?;
    if let Some(timing) = timing {
        writeln!(out, "{}", timing_line(&timing))?;
    }
    session.insert(&name, result, format!("computed by {}", statement.trim()));
    Ok(())
}

/// Registers the operator `text` defines (`:def`, `--def`): its name and
/// arity.
pub fn define_operator(text: &str, context: &str) -> Result<(String, usize)> {
    let operator = Operator::define(text).map_err(|e| CliError::bad(context, e.to_string()))?;
    let (name, arity) = (operator.name().to_string(), operator.arity());
    register_operator(operator).map_err(|e| CliError::bad(context, e.to_string()))?;
    Ok((name, arity))
}

/// Checks a name typed after a command.
fn tensor_name<'a>(name: &'a str, context: &str) -> Result<&'a str> {
    if is_identifier(name) {
        Ok(name)
    } else {
        Err(CliError::bad(
            context,
            format!("`{name}` is not a name: names start with a letter or _ and go on with letters, digits or _"),
        ))
    }
}

/// The one-line summary of a tensor just made.
fn header(session: &Session, name: &str, out: &mut dyn Write) -> Result<()> {
    if let Some(named) = session.get(name) {
        write_named(out, name, &named.tensor, 0)?;
    }
    Ok(())
}

/// `:list`.
fn list(session: &Session, out: &mut dyn Write) -> Result<()> {
    let mut any = false;
    for (name, named) in session.tensors() {
        any = true;
        writeln!(
            out,
            "{name}: {}{}, {}, {} stored ({})",
            shape_text(named.tensor.shape()),
            of_type(named.tensor.value_type()),
            named.tensor.format(),
            named.tensor.stored(),
            named.origin
        )?;
    }
    for (name, ty) in session.pending_types() {
        any = true;
        writeln!(out, "{name}: not yet made, to hold {ty} values")?;
    }
    for (name, spec) in session.pending_formats() {
        any = true;
        writeln!(out, "{name}: not yet made, to be stored as {spec}")?;
    }
    for (var, size) in session.sizes() {
        any = true;
        writeln!(out, "index {var}: size {size}")?;
    }
    if !any {
        writeln!(out, "no tensors yet (:load, :gen or a statement make them)")?;
    }
    Ok(())
}
