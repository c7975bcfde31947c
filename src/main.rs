//! `git-diffidx`: the thin command-line front of diffidx. Flags are defined in
//! `cli/mod.rs`; each subcommand lives in its own file under `cli/`.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod allocator;
mod cli;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod openssl_init;

use std::process::ExitCode;

fn main() -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        openssl_init::main_started();
        allocator::register_release();
        allocator::syntax_trees::keep_apart();
    }
    cli::main()
}
