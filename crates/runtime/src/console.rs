//! Lines the user must see, past the test harness's output capture.

/// Writes a line the user must see to the process's stderr itself, past
/// the test harness's output capture (which takes `eprintln!`, also from
/// threads a test spawns): a budget that cut a run short, a run that stands
/// still. `cargo test` would otherwise show a plain `ok`, or nothing.
pub fn tell_user(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}
