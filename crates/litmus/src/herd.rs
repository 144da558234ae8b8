//! Reading herd7's output (the expected results of the conformance suite).

use std::collections::BTreeSet;

/// What herd7 printed for one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HerdResult {
    /// Each state as a sorted list of `key=value` strings (`0:r0=1`, `[x]=2`).
    pub states: BTreeSet<Vec<String>>,
    /// `None` when herd printed `Undef` (the test has a data race).
    pub ok: Option<bool>,
    pub race: bool,
    pub positive: u64,
    pub negative: u64,
}

/// Normalises a herd state line `0:r0=1; [x]=2;` into sorted `key=value` items.
pub fn parse_state_line(line: &str) -> Vec<String> {
    let mut items: Vec<String> = line
        .split(';')
        .map(|s| s.split_whitespace().collect::<String>())
        .filter(|s| !s.is_empty())
        .collect();
    items.sort();
    items
}

/// Parses herd7's output; `Err` carries herd's own message when it failed on the test.
pub fn parse_herd_output(text: &str) -> Result<HerdResult, String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("States "))
        .ok_or_else(|| text.trim().to_string())?;
    let n: usize = lines[start]["States ".len()..]
        .trim()
        .parse()
        .map_err(|_| format!("bad States line: {}", lines[start]))?;
    let states = lines[start + 1..start + 1 + n]
        .iter()
        .map(|l| parse_state_line(l))
        .collect();
    let rest = &lines[start + 1 + n..];
    let ok = if rest.iter().any(|l| l.trim() == "Ok") {
        Some(true)
    } else if rest.iter().any(|l| l.trim() == "No") {
        Some(false)
    } else {
        None
    };
    let race = rest.iter().any(|l| l.trim() == "Flag *undef*");
    let (mut positive, mut negative) = (0, 0);
    if let Some(w) = rest.iter().find(|l| l.starts_with("Positive:")) {
        let parts: Vec<&str> = w.split_whitespace().collect();
        positive = parts.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        negative = parts.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    }
    Ok(HerdResult {
        states,
        ok,
        race,
        positive,
        negative,
    })
}
