//! The schedule's text: `name(arg, ...)` commands separated by `;`, every
//! error pointing at its column.

use super::{BoundKind, Command, Placed, RaceStrategy, Schedule};
use crate::cin::Blocking;
use crate::error::{EngineError, Result};

/// The commands of the paper, with the arguments each takes.
const COMMANDS: [(&str, &str); 9] = [
    ("reorder", "reorder(i, j, ...)"),
    ("split", "split(i, i0, i1, factor)"),
    ("divide", "divide(i, i0, i1, parts)"),
    ("pos", "pos(i, ipos, A)"),
    ("fuse", "fuse(i, j, f)"),
    ("precompute", "precompute(expr, i, iw, w)"),
    ("unroll", "unroll(i, factor)"),
    ("bound", "bound(i, ib, size[, max_exact|max_constraint])"),
    (
        "parallelize",
        "parallelize(i, cpu_threads|cpu_vector, no_races|atomics|temporary|ignore_races|parallel_reduction)",
    ),
];

/// Parses a schedule's text (see [`Schedule`]).
///
/// ```
/// use tessera_engine::schedule::parse_schedule;
///
/// let err = parse_schedule("reorder(i, j); splt(i, i0, i1, 8)").unwrap_err();
/// assert_eq!(err.to_string(), "schedule, column 16: unknown command splt (did you mean split?)");
/// ```
pub fn parse_schedule(text: &str) -> Result<Schedule> {
    let mut schedule = Schedule::new();
    let mut start = 0;
    for piece in text.split(';') {
        let column = start + piece.len() - piece.trim_start().len() + 1;
        start += piece.len() + 1;
        if piece.trim().is_empty() {
            continue;
        }
        let command = command(piece.trim(), column)?;
        schedule.commands.push(Placed { command, column });
    }
    Ok(schedule)
}

fn error(column: usize, message: String) -> EngineError {
    EngineError::Schedule { column, message }
}

/// One argument's text and its column.
struct Arg<'a> {
    text: &'a str,
    column: usize,
}

fn command(text: &str, column: usize) -> Result<Command> {
    let open = text.find('(').ok_or_else(|| {
        error(
            column,
            format!("expected a command such as split(i, i0, i1, 32), found `{text}`"),
        )
    })?;
    let name = text[..open].trim_end();
    let Some((_, usage)) = COMMANDS.iter().find(|(n, _)| *n == name) else {
        let nearest = COMMANDS
            .iter()
            .map(|(n, _)| (strsim::levenshtein(n, name), *n))
            .min()
            .filter(|(d, _)| *d <= 2)
            .map(|(_, n)| format!(" (did you mean {n}?)"))
            .unwrap_or_else(|| {
                let names: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
                format!(" (commands: {})", names.join(", "))
            });
        return Err(error(column, format!("unknown command {name}{nearest}")));
    };
    if !text.ends_with(')') {
        return Err(error(
            column + text.len(),
            format!("expected `)` closing {name}'s arguments"),
        ));
    }
    let args = arguments(&text[open + 1..text.len() - 1], column + open + 1)?;
    let count = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(error(column, format!("{name} takes {n} arguments: {usage}")))
        }
    };
    Ok(match name {
        "reorder" => {
            if args.len() < 2 {
                return Err(error(column, format!("reorder takes two variables or more: {usage}")));
            }
            let mut vars: Vec<String> = Vec::new();
            for a in &args {
                let v = variable(a)?;
                if vars.contains(&v) {
                    return Err(error(a.column, format!("{v} appears twice in reorder")));
                }
                vars.push(v);
            }
            Command::Reorder(vars)
        }
        "parallelize" => {
            count(3)?;
            let var = variable(&args[0])?;
            let vector = match args[1].text {
                "cpu_threads" => false,
                "cpu_vector" => true,
                unit => {
                    return Err(error(
                        args[1].column,
                        format!("unknown parallel unit {unit}: the CPU tiers' units are cpu_threads and cpu_vector"),
                    ))
                }
            };
            let races = RaceStrategy::ALL
                .into_iter()
                .find(|r| r.name() == args[2].text)
                .ok_or_else(|| {
                    let names: Vec<&str> = RaceStrategy::ALL.iter().map(|r| r.name()).collect();
                    error(
                        args[2].column,
                        format!(
                            "unknown output race strategy {} (strategies: {})",
                            args[2].text,
                            names.join(", ")
                        ),
                    )
                })?;
            if vector {
                Command::Vectorize { var, races }
            } else if races == RaceStrategy::ParallelReduction {
                return Err(error(
                    args[2].column,
                    "parallel_reduction reduces across the lanes of cpu_vector; threads use temporary or atomics"
                        .into(),
                ));
            } else {
                Command::Parallelize { var, races }
            }
        }
        "split" | "divide" => {
            count(4)?;
            let names = [variable(&args[0])?, variable(&args[1])?, variable(&args[2])?];
            if names[1] == names[2] || names[1] == names[0] || names[2] == names[0] {
                return Err(error(
                    args[1].column,
                    format!("{name} needs two new names, distinct from the variable it cuts"),
                ));
            }
            let [var, outer, inner] = names;
            let factor = factor(&args[3], name)?;
            let blocking = match name {
                "split" => Blocking::Size(factor),
                _ => Blocking::Parts(factor),
            };
            Command::Split {
                var,
                outer,
                inner,
                blocking,
            }
        }
        "fuse" => {
            count(3)?;
            let [outer, inner, fused] = [variable(&args[0])?, variable(&args[1])?, variable(&args[2])?];
            if outer == inner || fused == outer || fused == inner {
                return Err(error(
                    args[0].column,
                    "fuse needs two different variables and a new name for the pair".into(),
                ));
            }
            Command::Fuse { outer, inner, fused }
        }
        "pos" => {
            count(3)?;
            let [var, pos_var] = [variable(&args[0])?, variable(&args[1])?];
            if var == pos_var {
                return Err(error(args[1].column, "pos needs a new name for the positions".into()));
            }
            Command::Pos {
                var,
                pos_var,
                tensor: tensor_name(&args[2])?,
            }
        }
        "precompute" => {
            count(4)?;
            Command::Precompute {
                expr: args[0].text.to_string(),
                var: variable(&args[1])?,
                workspace_var: variable(&args[2])?,
                workspace: variable(&args[3])?,
            }
        }
        "unroll" => {
            count(2)?;
            Command::Unroll {
                var: variable(&args[0])?,
                factor: factor(&args[1], name)?,
            }
        }
        "bound" => {
            if !(3..=4).contains(&args.len()) {
                return Err(error(column, format!("bound takes 3 or 4 arguments: {usage}")));
            }
            let [var, bound_var] = [variable(&args[0])?, variable(&args[1])?];
            if var == bound_var {
                return Err(error(
                    args[1].column,
                    "bound needs a new name for the bound variable".into(),
                ));
            }
            let kind = match args.get(3).map(|a| (a.text, a.column)) {
                None | Some(("max_exact", _)) => BoundKind::MaxExact,
                Some(("max_constraint", _)) => BoundKind::MaxConstraint,
                Some((kind @ ("min_exact" | "min_constraint"), at)) => {
                    return Err(error(
                        at,
                        format!("bound kind {kind} fixes where the range starts, and tessera's loops start at 0; max_exact and max_constraint run"),
                    ))
                }
                Some((other, at)) => {
                    return Err(error(
                        at,
                        format!("unknown bound kind {other} (kinds: max_exact, max_constraint)"),
                    ))
                }
            };
            Command::Bound {
                var,
                bound_var,
                size: factor(&args[2], name)?,
                kind,
            }
        }
        _ => unreachable!("every command of COMMANDS is parsed"),
    })
}

/// Splits `text` at the commas outside parentheses.
fn arguments<'a>(text: &'a str, column: usize) -> Result<Vec<Arg<'a>>> {
    let mut args = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let push = |from: usize, to: usize, args: &mut Vec<Arg<'a>>| -> Result<()> {
        let raw = &text[from..to];
        let lead = raw.len() - raw.trim_start().len();
        let arg = Arg {
            text: raw.trim(),
            column: column + from + lead,
        };
        if arg.text.is_empty() {
            return Err(error(column + from, "an argument is missing".into()));
        }
        args.push(arg);
        Ok(())
    };
    for (k, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Err(error(column + k, "unbalanced `)`".into())),
            ')' => depth -= 1,
            ',' if depth == 0 => {
                push(start, k, &mut args)?;
                start = k + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(error(column + text.len(), "expected `)`".into()));
    }
    if !text.trim().is_empty() || start > 0 {
        push(start, text.len(), &mut args)?;
    }
    Ok(args)
}

/// A positive factor of `command`.
fn factor(arg: &Arg<'_>, command: &str) -> Result<usize> {
    match arg.text.parse::<usize>() {
        Ok(0) => {
            let article = if command.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            Err(error(arg.column, format!("{article} {command} factor of 0")))
        }
        Ok(n) if n <= u32::MAX as usize => Ok(n),
        _ => Err(error(
            arg.column,
            format!(
                "{command}'s factor must be a positive integer below 2^32, found `{}`",
                arg.text
            ),
        )),
    }
}

/// The tensor `pos` names: `A`, or an access `A(i,j)` (TACO's form).
fn tensor_name(arg: &Arg<'_>) -> Result<String> {
    let name = match arg.text.split_once('(') {
        Some((name, rest)) if rest.ends_with(')') => name.trim_end(),
        Some(_) => {
            return Err(error(
                arg.column,
                format!("expected a tensor or an access such as A(i,j), found `{}`", arg.text),
            ))
        }
        None => arg.text,
    };
    variable(&Arg {
        text: name,
        column: arg.column,
    })
}

fn variable(arg: &Arg<'_>) -> Result<String> {
    let ok = arg
        .text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && arg.text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(arg.text.to_string())
    } else {
        Err(error(
            arg.column,
            format!("expected an index variable, found `{}`", arg.text),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        parse_schedule(text).unwrap_err().to_string()
    }

    #[test]
    fn commands_parse_with_their_columns_and_print_canonically() {
        let s = parse_schedule(" reorder(i,k , j);parallelize(i, cpu_threads, temporary);").unwrap();
        assert_eq!(s.commands().len(), 2);
        assert_eq!(s.commands()[0].column, 2);
        assert_eq!(s.commands()[1].column, 19);
        assert_eq!(
            s.to_string(),
            "reorder(i, k, j); parallelize(i, cpu_threads, temporary)"
        );
        assert_eq!(s.parallel(), Some(("i", RaceStrategy::Temporary, 19)));
        assert!(parse_schedule("  ").unwrap().is_empty());
    }

    #[test]
    fn every_malformed_command_is_refused_at_its_column() {
        for (text, message) in [
            ("reorder(i)", "schedule, column 1: reorder takes two variables or more: reorder(i, j, ...)"),
            ("reorder(i, i)", "schedule, column 12: i appears twice in reorder"),
            ("reorder(i, 2j)", "schedule, column 12: expected an index variable, found `2j`"),
            ("reorder(i,,j)", "schedule, column 11: an argument is missing"),
            ("reorder(i, j", "schedule, column 13: expected `)` closing reorder's arguments"),
            ("split(i, i0, i1, 0)", "schedule, column 18: a split factor of 0"),
            ("split(i, i0, i1, x)", "schedule, column 18: split's factor must be a positive integer below 2^32, found `x`"),
            ("split(i, i0, i0, 4)", "schedule, column 10: split needs two new names, distinct from the variable it cuts"),
            (
                "divide(i, i, i1, 4)",
                "schedule, column 11: divide needs two new names, distinct from the variable it cuts",
            ),
            ("divide(i, i0, i1, 0)", "schedule, column 19: a divide factor of 0"),
            ("unroll(i)", "schedule, column 1: unroll takes 2 arguments: unroll(i, factor)"),
            ("unroll(i, 0)", "schedule, column 11: an unroll factor of 0"),
            ("bound(i, ib)", "schedule, column 1: bound takes 3 or 4 arguments: bound(i, ib, size[, max_exact|max_constraint])"),
            ("bound(i, ib, 8, min_exact)", "schedule, column 17: bound kind min_exact fixes where the range starts, and tessera's loops start at 0; max_exact and max_constraint run"),
            ("bound(i, ib, 8, exactly)", "schedule, column 17: unknown bound kind exactly (kinds: max_exact, max_constraint)"),
            ("bound(i, i, 8)", "schedule, column 10: bound needs a new name for the bound variable"),
            ("fuse(i, i, f)", "schedule, column 6: fuse needs two different variables and a new name for the pair"),
            ("pos(f, f, A)", "schedule, column 8: pos needs a new name for the positions"),
            ("pos(f, fp, A(i,j)", "schedule, column 17: expected `)`"),
            ("pos(f, fp, 3A)", "schedule, column 12: expected an index variable, found `3A`"),
            ("x; rorder(i, j)", "schedule, column 1: expected a command such as split(i, i0, i1, 32), found `x`"),
            ("reorder(i, j); rorder(i, j)", "schedule, column 16: unknown command rorder (did you mean reorder?)"),
            ("tile(i, 4)", "schedule, column 1: unknown command tile (commands: reorder, split, divide, pos, fuse, precompute, unroll, bound, parallelize)"),
            ("parallelize(i, gpu_block, no_races)", "schedule, column 16: unknown parallel unit gpu_block: the CPU tiers' units are cpu_threads and cpu_vector"),
            ("parallelize(i, cpu_threads, parallel_reduction)", "schedule, column 29: parallel_reduction reduces across the lanes of cpu_vector; threads use temporary or atomics"),
            ("parallelize(i, cpu_threads, maybe)", "schedule, column 29: unknown output race strategy maybe (strategies: no_races, atomics, temporary, ignore_races, parallel_reduction)"),
        ] {
            assert_eq!(refusal(text), message, "{text}");
        }
    }

    #[test]
    fn pos_takes_a_tensor_or_an_access_of_it() {
        for text in ["fuse(i, j, f); pos(f, fp, B)", "fuse(i,j,f); pos(f, fp, B(i,j,k))"] {
            let s = parse_schedule(text).unwrap();
            assert_eq!(s.to_string(), "fuse(i, j, f); pos(f, fp, B)", "{text}");
        }
    }

    #[test]
    fn precompute_keeps_its_expression_argument_whole() {
        let s = parse_schedule("precompute(A(i,j) * x(j), j, jw, w)").unwrap();
        assert_eq!(
            s.commands()[0].command,
            Command::Precompute {
                expr: "A(i,j) * x(j)".into(),
                var: "j".into(),
                workspace_var: "jw".into(),
                workspace: "w".into(),
            }
        );
    }
}
