//! Data reordering on the command line: `tessera reorder IN OUT --method M`
//! (reorder a file, print bandwidth and profile before and after and what
//! the ordering cost, optionally save the permutation), and `--reorder M` /
//! `--reorder-from NAME:PERM` of `tessera eval` (the statement runs on
//! reordered inputs and its result is permuted back; the rule of which
//! permutation goes where is `tessera_engine::reorder`'s).
//!
//! `tessera reorder` moves a complex file's values as they are (they are
//! read as `c64`); `--reorder` refuses complex tensors, whose values the
//! engine's reordering permutes as real ones.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use tessera_engine::reorder::{Origin, ReorderPlan};
use tessera_engine::{EngineError, Inputs};
use tessera_formats::io::FileValue;
use tessera_formats::reorder::{band_profile, load_permutations, order_entries, save_permutations, Method};
use tessera_formats::typed::Typed;
use tessera_formats::{AnyTensor, Complex64, CoordinateList, Tensor, Value, ValueType};

use super::args::{NameValue, ReorderArgs};
use super::error::{CliError, Result};
use super::files::{self, FileEntries, FileKind};
use super::generate::shape_text;
use super::progress::Spinner;
use super::session::Session;
use super::summary::millis;

/// Runs `tessera reorder`.
pub fn run(args: &ReorderArgs, out: &mut dyn Write) -> Result<ExitCode> {
    // Refuse output names tessera cannot write before reading anything.
    FileKind::of(&args.output, "")?;
    let size = std::fs::metadata(&args.input).map_or(0, |m| m.len());
    let spinner = Spinner::for_file(format!("reading {}", args.input.display()), size);
    if files::holds_complex(&args.input, "")? {
        let file = files::read_entries_as::<Complex64>(&args.input, "")?;
        return reorder(args, file, spinner, out);
    }
    let file = files::read_entries(&args.input, "")?;
    // Integers beyond 2^53 are moved as they are, not rounded.
    if files::rounded_integers(&file, &args.input) {
        spinner.say(format!("reading {} again as i64", args.input.display()));
        let file = files::read_entries_as::<i64>(&args.input, "")?;
        return reorder(args, file, spinner, out);
    }
    reorder(args, file, spinner, out)
}

/// [`run`] on the file's entries, of `V` values.
fn reorder<V: FileValue + Typed>(
    args: &ReorderArgs,
    file: FileEntries<V>,
    spinner: Spinner,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let mut entries = file.entries;
    entries.canonicalize();
    let (perms, how, ordering) = match &args.permutation {
        Some(path) => {
            spinner.say(format!("reading the permutation {}", path.display()));
            let perms = load_permutations(path).map_err(|source| CliError::File {
                context: "--permutation".into(),
                source,
            })?;
            (perms, format!("by the permutation {}", path.display()), Duration::ZERO)
        }
        None => {
            spinner.say(format!("ordering by {}", args.method));
            let start = Instant::now();
            let perms = order_entries(&entries, args.method).map_err(|source| CliError::Format {
                context: format!("--method {}", args.method),
                source,
            })?;
            (perms, format!("by {}", args.method), start.elapsed())
        }
    };
    spinner.say("permuting".to_string());
    let start = Instant::now();
    let reordered = perms.apply(&entries).map_err(|source| CliError::Format {
        context: format!("permuting {}", args.input.display()),
        source,
    })?;
    let applying = start.elapsed();
    spinner.say(format!("writing {}", args.output.display()));
    let tensor = files::pack(&reordered, file_format(&reordered, file.dense), "")?;
    files::write(&args.output, V::tensor_ref(&tensor), "")?;
    if let Some(path) = &args.save_permutation {
        let comment = format!("tessera reorder {} {how}", args.input.display());
        save_permutations(path, &perms, &comment).map_err(|source| CliError::File {
            context: "--save-permutation".into(),
            source,
        })?;
    }
    drop(spinner);

    writeln!(
        out,
        "{} -> {}: {}, {} nonzero{}, reordered {how}",
        args.input.display(),
        args.output.display(),
        shape_text(entries.shape()),
        entries.len(),
        if entries.len() == 1 { "" } else { "s" },
    )?;
    write_band_profiles(out, &entries, &reordered)?;
    writeln!(
        out,
        "cost: ordering {}, applying the permutation {}",
        millis(ordering),
        millis(applying)
    )?;
    if let Some(path) = &args.save_permutation {
        writeln!(out, "permutation saved to {}", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `before: bandwidth …` and `after: …`, or why there are none.
fn write_band_profiles<V: Value>(
    out: &mut dyn Write,
    before: &CoordinateList<V>,
    after: &CoordinateList<V>,
) -> Result<()> {
    match (band_profile(before), band_profile(after)) {
        (Ok(b), Ok(a)) => {
            writeln!(out, "before: {b}")?;
            writeln!(out, "after:  {a}")?;
        }
        (Err(e), _) | (_, Err(e)) => writeln!(out, "bandwidth and profile: not measured ({e})")?,
    }
    Ok(())
}

/// The format the output file is packed in: as its kind reads back.
fn file_format<V: Value>(entries: &CoordinateList<V>, dense: bool) -> tessera_formats::Format {
    files::natural_format(entries.order(), dense)
}

/// How `eval` asked for reordering.
pub enum Request<'a> {
    Method(Method),
    Saved(&'a NameValue<PathBuf>),
}

/// A reordering applied to a session's inputs: what to tell and how to
/// put the result back.
pub struct Applied {
    plan: ReorderPlan,
    permute_inputs: Duration,
}

impl Applied {
    /// The plan's `reordering:` part, with what it cost so far.
    pub fn describe(&self) -> String {
        format!(
            "{}  cost: ordering {}, permuting the inputs {}\n",
            self.plan.describe(),
            millis(self.plan.ordering_time),
            millis(self.permute_inputs)
        )
    }

    /// The result in the original coordinates, and how long that took.
    pub fn restore(&self, result: &Tensor<f64>) -> Result<(Tensor<f64>, Duration)> {
        let start = Instant::now();
        let restored = self
            .plan
            .restore(result)
            .map_err(|e| CliError::bad("permuting the result back", e.to_string()))?;
        Ok((restored, start.elapsed()))
    }

    /// `reorder: lexi from A: ordering …, permuting inputs …, the result back …`.
    pub fn cost_line(&self, restore: Duration) -> String {
        let how = match self.plan.origin() {
            Origin::Computed(method) => format!("{method} from the structure of {}", self.plan.driver()),
            Origin::Given => format!("given permutations of {}", self.plan.driver()),
        };
        format!(
            "reorder: {how}: ordering {}, permuting the inputs {}, permuting the result back {} (outside any time above)",
            millis(self.plan.ordering_time),
            millis(self.permute_inputs),
            millis(restore)
        )
    }
}

/// Reorders the tensors `statement` reads in `session` (replacing them by
/// their permuted selves) as `request` says.
pub fn apply_to_session(session: &mut Session, statement: &str, request: Request<'_>) -> Result<Applied> {
    let err = |source: EngineError| CliError::Statement {
        statement: statement.trim().to_string(),
        source: Box::new(source),
        hint: String::new(),
    };
    let parsed = super::session::parse(statement)?;
    let mut names: Vec<String> = vec![parsed.lhs.tensor.clone()];
    names.extend(parsed.rhs.accesses().iter().map(|a| a.tensor.clone()));
    let asked = match &request {
        Request::Method(method) => format!("--reorder {method}"),
        Request::Saved(saved) => format!("--reorder-from {}", saved.name),
    };
    let mut inputs = Inputs::new();
    for name in &names {
        if let Some(named) = session.get(name) {
            if named.tensor.value_type() == ValueType::C64 {
                return Err(CliError::bad(
                    asked,
                    format!("{name} holds c64 values: reordering permutes real values only"),
                ));
            }
            inputs.insert_any(name, &named.tensor);
        }
    }
    let (plan, context) = match request {
        Request::Method(method) => (
            ReorderPlan::compute(statement, &inputs, method).map_err(err)?,
            format!("reordered by {method}"),
        ),
        Request::Saved(saved) => {
            let perms = load_permutations(&saved.value).map_err(|source| CliError::File {
                context: format!("--reorder-from {}", saved.name),
                source,
            })?;
            let plan = ReorderPlan::with_permutations(statement, &inputs, &saved.name, perms).map_err(|e| {
                CliError::bad(
                    format!("--reorder-from {}:{}", saved.name, saved.value.display()),
                    e.to_string(),
                )
            })?;
            (plan, format!("reordered by {}", saved.value.display()))
        }
    };
    let reordered = plan.reorder_inputs(&inputs).map_err(err)?;
    let permute_inputs = reordered.time;
    for (name, tensor) in reordered.into_tensors() {
        let Some(named) = session.get(&name) else {
            continue;
        };
        // Permuted in `f64`, and back to the tensor's own type (exact but
        // for an `i64` beyond 2^53).
        let tensor = AnyTensor::narrowed(tensor, named.tensor.value_type());
        let origin = format!("{}; {context}", named.origin);
        session.insert(&name, tensor, origin);
    }
    Ok(Applied { plan, permute_inputs })
}
