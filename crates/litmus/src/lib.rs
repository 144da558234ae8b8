//! herd7-style C litmus tests on c11check: parse, run under a model, report.

pub mod ast;
pub mod dynamic;
pub mod expect;
pub mod herd;
pub mod interp;
pub mod lexer;
pub mod live_run;
pub mod parser;
pub mod repair;
pub mod robust;
pub mod run;
pub mod states;

pub use ast::LitmusTest;
pub use c11check_explore::Shard;
pub use lexer::ParseError;
pub use run::{run_test, run_test_inspecting, run_test_with, RunOptions, TestReport};

use std::path::Path;

/// A litmus file that could not be read or parsed: `file:line:col: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    pub path: String,
    pub line: u32,
    pub col: u32,
    pub msg: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path, self.msg)
        } else {
            write!(f, "{}:{}:{}: {}", self.path, self.line, self.col, self.msg)
        }
    }
}

impl std::error::Error for FileError {}

/// Reads and parses a litmus file.
pub fn load(path: &Path) -> Result<LitmusTest, FileError> {
    let p = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| FileError {
        path: p.clone(),
        line: 0,
        col: 0,
        msg: format!("cannot read: {e}"),
    })?;
    parser::parse(&src).map_err(|e| FileError {
        path: p,
        line: e.line,
        col: e.col,
        msg: e.msg,
    })
}
