//! The `tessera` command: evaluate sparse tensor statements from the shell
//! (`tessera eval`), interactively or from a script (`tessera repl`), and
//! convert or describe tensor files (`tessera convert`, `tessera info`).
//! Run `tessera --help` for the options; the code is in [`cli`].

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
