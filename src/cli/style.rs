//! Terminal styling: colors only on a terminal, never with `NO_COLOR`.

use std::io::IsTerminal;

use diffidx_core::Status;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy)]
pub struct Style {
    color: bool,
}

impl Style {
    pub fn for_stdout(choice: ColorChoice) -> Style {
        let color = match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        Style { color }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn status(&self, status: Status, text: &str) -> String {
        let code = match status {
            Status::Added => "1;32",
            Status::Modified => "1;33",
            Status::Deleted => "1;31",
            Status::Moved => "1;36",
            Status::Unchanged => "0",
        };
        self.paint(code, text)
    }

    pub fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    pub fn warn(&self, text: &str) -> String {
        self.paint("33", text)
    }
}
