use clap::Parser;

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = perfbot::app::cli::Cli::parse();
    if cli.command.prints_for_a_pipe() {
        // `perfbot report --print | head`: end quietly when the reader goes,
        // as cat and grep do, instead of a "Broken pipe" panic. Only for the
        // commands that just print: the ones that talk to servers keep Rust's
        // default (EPIPE as an error) so that a closed socket is not fatal.
        // SAFETY: called before any thread starts; resets one signal's action.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    perfbot::app::cli::run(cli)
}
