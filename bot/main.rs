use clap::Parser;

fn main() -> std::process::ExitCode {
    // `RUST_LOG` as directives (`warn`, `perfbot=debug,info`). A `Targets`
    // filter rather than `EnvFilter`: the latter's regex matching pulls in
    // full-DFA regex compilation, which made every regex perfbot compiles at
    // start-up (the selection rules, the classifier's phrases) several times
    // slower.
    use tracing_subscriber::prelude::*;
    let filter: tracing_subscriber::filter::Targets = std::env::var("RUST_LOG")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            // sled's own error lines repeat, once per tree, what perfbot
            // says of the same failure (a full disk: eighteen lines).
            tracing_subscriber::filter::Targets::new()
                .with_default(tracing::Level::WARN)
                .with_target("sled", tracing::level_filters::LevelFilter::OFF)
        });
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .with(filter)
        .init();
    // `PERFBOT_CONFIG=` (set, but empty) means no config file, as an empty
    // variable does for most tools, rather than clap's "a value is required
    // for '--config'", which names an option the user never typed.
    if std::env::var_os("PERFBOT_CONFIG").is_some_and(|v| v.is_empty()) {
        std::env::remove_var("PERFBOT_CONFIG");
    }
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
