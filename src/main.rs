use clap::Parser;
use shufflecert::cli::{self, args::Cli};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli::run(&cli) {
        Ok(outcome) => {
            let mut stdout = std::io::stdout().lock();
            if stdout
                .write_all(outcome.stdout.as_bytes())
                .and_then(|_| stdout.flush())
                .is_err()
            {
                return ExitCode::from(1);
            }
            match outcome.failure {
                Some(message) => {
                    eprintln!("shufflecert: {message}");
                    ExitCode::from(1)
                }
                None => ExitCode::SUCCESS,
            }
        }
        Err(e) => {
            eprintln!("shufflecert: error: {e}");
            ExitCode::from(2)
        }
    }
}
