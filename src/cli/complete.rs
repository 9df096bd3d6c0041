//! Tab completion in the REPL: `:` commands at the start of a line, the
//! session's tensor names where a name goes (a bare name, `:print`,
//! `:drop`, `:save`, `:format`, a statement's operands), and file paths
//! where a path goes (`:load NAME PATH`, `:save NAME PATH`).
//!
//! [`complete`] takes the line, the cursor and the names and gives where the
//! completed word starts and its candidates; [`ReplHelper`] hands it to
//! rustyline, which the interactive REPL refreshes with the session's names
//! before each line.

use std::path::Path;

use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// The REPL's commands, as `:help` lists them.
pub const COMMANDS: &[&str] = &[
    "load", "gen", "format", "fill", "type", "size", "semiring", "def", "threads", "schedule", "print", "list", "save",
    "drop", "plan", "lattice", "bytecode", "time", "help", "quit",
];

/// Commands whose first argument is a tensor of the session.
const NAME_FIRST: &[&str] = &["print", "p", "drop", "save", "format", "fill", "type"];
/// Commands whose second argument is a file path.
const PATH_SECOND: &[&str] = &["load", "save"];
/// Commands followed by a statement.
const STATEMENT: &[&str] = &["plan", "lattice", "bytecode", "time"];

/// Where the word at the cursor starts, and what it may complete to (sorted;
/// each a whole replacement for the word).
pub fn complete(line: &str, pos: usize, names: &[String]) -> (usize, Vec<String>) {
    let pos = floor_boundary(line, pos);
    let before = &line[..pos];
    let word_start = before.rfind(char::is_whitespace).map_or(0, |k| k + 1);
    let Some(command_line) = before.trim_start().strip_prefix(':') else {
        return complete_name(before, names);
    };
    let words: Vec<&str> = command_line.split_whitespace().collect();
    // The index of the word at the cursor: 0 is the command itself.
    let at = if before.ends_with(char::is_whitespace) || words.is_empty() {
        words.len()
    } else {
        words.len() - 1
    };
    let word = &before[word_start..];
    if at == 0 {
        let typed = word.trim_start_matches(':');
        let candidates = COMMANDS
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| format!(":{c} "))
            .collect();
        return (word_start, candidates);
    }
    let command = words[0];
    if at == 1 && NAME_FIRST.contains(&command) {
        return (word_start, matching_names(word, names, ""));
    }
    if at == 2 && PATH_SECOND.contains(&command) {
        return (word_start, matching_paths(word));
    }
    if STATEMENT.contains(&command) && (command != "time" || at >= 2) {
        return complete_name(before, names);
    }
    (pos, Vec::new())
}

/// A tensor name for the identifier that ends at the end of `before`
/// (a bare name, or an operand of a statement).
fn complete_name(before: &str, names: &[String]) -> (usize, Vec<String>) {
    let start = before
        .char_indices()
        .rev()
        .take_while(|&(_, c)| c.is_alphanumeric() || c == '_')
        .last()
        .map_or(before.len(), |(k, _)| k);
    let word = &before[start..];
    if word.is_empty() && !before.trim().is_empty() {
        return (start, Vec::new());
    }
    (start, matching_names(word, names, ""))
}

fn matching_names(prefix: &str, names: &[String], suffix: &str) -> Vec<String> {
    let mut found: Vec<String> = names
        .iter()
        .filter(|n| n.starts_with(prefix))
        .map(|n| format!("{n}{suffix}"))
        .collect();
    found.sort();
    found
}

/// The entries of the directory `typed` names (up to its last `/`) that
/// start with the rest of it; directories end with `/`. Hidden entries
/// only when asked for with a leading dot.
fn matching_paths(typed: &str) -> Vec<String> {
    let (dir, prefix) = match typed.rfind('/') {
        Some(k) => (&typed[..=k], &typed[k + 1..]),
        None => ("", typed),
    };
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { Path::new(".") } else { Path::new(dir) }) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = e.path().is_dir();
            Some(format!("{dir}{name}{}", if is_dir { "/" } else { "" }))
        })
        .collect();
    found.sort();
    found
}

/// The largest character boundary of `line` at or before `pos`.
fn floor_boundary(line: &str, pos: usize) -> usize {
    let mut pos = pos.min(line.len());
    while !line.is_char_boundary(pos) {
        pos -= 1;
    }
    pos
}

/// Completion for rustyline, over the names it was last given.
#[derive(Debug, Default)]
pub struct ReplHelper {
    pub names: Vec<String>,
}

impl Completer for ReplHelper {
    type Candidate = String;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(complete(line, pos, &self.names))
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {}

impl Validator for ReplHelper {}

impl Helper for ReplHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        ["A", "A2", "x", "y_out"].iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn commands_complete_at_the_start_of_a_line() {
        assert_eq!(complete(":lo", 3, &names()), (0, vec![":load ".to_string()]));
        assert_eq!(
            complete(":l", 2, &names()),
            (0, vec![":load ".into(), ":list ".into(), ":lattice ".into()])
        );
        assert_eq!(complete(":", 1, &names()).1.len(), COMMANDS.len());
        assert_eq!(complete("  :he", 5, &names()), (2, vec![":help ".to_string()]));
    }

    #[test]
    fn every_command_of_help_completes() {
        for command in COMMANDS {
            assert!(super::super::repl::HELP.contains(&format!("  :{command}")), "{command}");
        }
        let listed = super::super::repl::HELP
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix(':'))
            .filter_map(|l| l.split_whitespace().next())
            .count();
        assert_eq!(listed, COMMANDS.len());
    }

    #[test]
    fn tensor_names_complete_where_a_name_goes() {
        assert_eq!(complete("A", 1, &names()), (0, vec!["A".to_string(), "A2".into()]));
        assert_eq!(complete(":print y", 8, &names()), (7, vec!["y_out".to_string()]));
        assert_eq!(complete(":drop ", 6, &names()).1, names());
        assert_eq!(complete("z(i) = A(i,j) * x", 17, &names()), (16, vec!["x".to_string()]));
        assert_eq!(
            complete(":plan z(i) = y_", 15, &names()),
            (13, vec!["y_out".to_string()])
        );
        assert_eq!(
            complete(":time 3 s = A", 13, &names()),
            (12, vec!["A".to_string(), "A2".into()])
        );
        // Not where a name goes: the count of :time, the new name of :load.
        assert!(complete(":time ", 6, &names()).1.is_empty());
        assert!(complete(":load ", 6, &names()).1.is_empty());
        assert!(complete("y(i) = ", 7, &names()).1.is_empty());
    }

    #[test]
    fn paths_complete_after_load_and_save() {
        let dir = std::env::temp_dir().join(format!("tessera_complete_{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("a.mtx"), "").unwrap();
        std::fs::write(dir.join("ab.tns"), "").unwrap();
        std::fs::write(dir.join(".hidden"), "").unwrap();
        let d = dir.display().to_string();
        let line = format!(":load A {d}/a");
        let (start, found) = complete(&line, line.len(), &names());
        assert_eq!(start, 8);
        assert_eq!(found, vec![format!("{d}/a.mtx"), format!("{d}/ab.tns")]);
        let line = format!(":save A {d}/");
        let found = complete(&line, line.len(), &names()).1;
        assert_eq!(
            found,
            vec![format!("{d}/a.mtx"), format!("{d}/ab.tns"), format!("{d}/sub/")]
        );
        let line = format!(":load A {d}/.h");
        assert_eq!(complete(&line, line.len(), &names()).1, vec![format!("{d}/.hidden")]);
        assert!(complete(":load A /no/such/dir/x", 22, &names()).1.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_cursor_inside_a_character_is_moved_to_its_start() {
        assert_eq!(complete("é", 1, &names()).0, 0);
    }
}
