use clap::Parser;
use shufflecert::cli::{self, args::Cli};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A panic is a bug: report it as one line (never a number) and exit with status 3.
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("shufflecert: internal error (a bug, no result reported): {message}{place}");
    }));
    let result = match std::panic::catch_unwind(|| cli::run(&cli)) {
        Ok(result) => result,
        Err(_) => return ExitCode::from(3),
    };
    match result {
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
