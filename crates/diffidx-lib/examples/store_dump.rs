//! Prints every row of a store's history and code graph as sorted lines,
//! to compare two stores (say, before and after a change to how batches
//! are loaded) with `diff`:
//!
//! ```text
//! cargo run --release --example store_dump -- REPO/.git/diffidx/graph.lbdb > a.txt
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use diffidx_lib::store::{Access, Store};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: store_dump PATH/TO/graph.lbdb");
        return ExitCode::from(2);
    };
    let dumped = Store::open(&path, Access::ReadOnly, Duration::from_secs(5)).and_then(|store| {
        let mut lines = store.history_dump()?;
        lines.extend(store.graph_dump()?);
        Ok(lines)
    });
    match dumped {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("store_dump: {e}");
            ExitCode::FAILURE
        }
    }
}
