use clap::Parser;
use shufflecert::cli::{self, args::Cli};
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // Help and version are answers, not errors.
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                eprintln!(
                    "shufflecert: error: a command is required (delta, epsilon, divergences, profile, bounds, audit, check, …; see shufflecert --help)"
                );
                return ExitCode::from(2);
            }
            eprintln!("{}", cli::usage_error(&e));
            return ExitCode::from(2);
        }
    };
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
        // For whoever debugs it: the usual opt-in backtrace.
        if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
            eprintln!("{}", std::backtrace::Backtrace::force_capture());
        }
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
