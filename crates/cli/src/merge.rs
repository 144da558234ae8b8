//! `c11check merge`: the `--json` summaries of a run's shards (`--shard
//! I/N`, one per machine or CI job) added up into the summary one run
//! would have printed.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shards' outputs of `c11check litmus --json --shard I/N` (one
    /// JSON object per line; `-` reads standard input).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print the merged summaries as JSON lines.
    #[arg(long)]
    json: bool,
}

/// One test's summaries from the shards, by shard number.
#[derive(Default)]
struct Group {
    count: Option<u32>,
    parts: BTreeMap<u32, Map<String, Value>>,
}

pub fn merge(args: MergeArgs) -> ExitCode {
    match merge_files(&args.files) {
        Ok(merged) => {
            for m in &merged {
                if args.json {
                    println!("{}", Value::Object(m.clone()));
                } else {
                    println!("{}", text_line(m));
                }
            }
            if !args.json {
                let total: u64 = merged
                    .iter()
                    .map(|m| m["executions"].as_u64().unwrap_or(0))
                    .sum();
                println!("{} tests merged; {total} executions", merged.len());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("c11check merge: {e}");
            ExitCode::from(2)
        }
    }
}

/// The merged summary of each test (by name and model, in the order first
/// seen), or what is wrong with the inputs: a line that is no summary, a
/// shard missing or given twice, shards of different splits.
pub fn merge_files(files: &[PathBuf]) -> Result<Vec<Map<String, Value>>, String> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for f in files {
        let text = if f.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin()).map_err(|e| format!("standard input: {e}"))?
        } else {
            std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?
        };
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{}:{}", f.display(), i + 1);
            let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(line) else {
                return Err(format!(
                    "{at}: not a JSON object (the output of `c11check litmus --json`)"
                ));
            };
            if let Some(e) = obj.get("error") {
                return Err(format!("{at}: the shard's run failed: {e}"));
            }
            let field = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
            let (Some(name), Some(model)) = (field("name"), field("model")) else {
                return Err(format!("{at}: no test name or model: not a test summary"));
            };
            if !obj.contains_key("state_counts") {
                return Err(format!(
                    "{at}: no state counts (made by an older c11check?)"
                ));
            }
            let (index, count) = match obj.get("shard").and_then(Value::as_str) {
                None => (1, 1),
                Some(s) => {
                    let shard: c11check_litmus::Shard =
                        s.parse().map_err(|e: String| format!("{at}: {e}"))?;
                    (shard.index + 1, shard.count)
                }
            };
            let key = (name.clone(), model.clone());
            if !groups.contains_key(&key) {
                order.push(key.clone());
            }
            let g = groups.entry(key).or_default();
            if g.count.is_some_and(|c| c != count) {
                return Err(format!(
                    "{at}: {name} under {model}: shards of {count} and of {} mixed",
                    g.count.unwrap_or(0)
                ));
            }
            g.count = Some(count);
            if g.parts.insert(index, obj).is_some() {
                return Err(format!(
                    "{at}: {name} under {model}: shard {index}/{count} given twice"
                ));
            }
        }
    }
    order
        .into_iter()
        .map(|key| {
            let g = &groups[&key];
            let count = g.count.unwrap_or(1);
            let missing: Vec<String> = (1..=count)
                .filter(|i| !g.parts.contains_key(i))
                .map(|i| format!("{i}/{count}"))
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "{} under {}: shard{} {} missing: the merged counts would be short",
                    key.0,
                    key.1,
                    if missing.len() > 1 { "s" } else { "" },
                    missing.join(", ")
                ));
            }
            Ok(merge_group(g.parts.values().collect()))
        })
        .collect()
}

/// Adds up the summaries of one test's shards.
fn merge_group(parts: Vec<&Map<String, Value>>) -> Map<String, Value> {
    let first = parts[0];
    let sum = |k: &str| -> u64 {
        parts
            .iter()
            .map(|p| p.get(k).and_then(Value::as_u64).unwrap_or(0))
            .sum()
    };
    let any = |k: &str| {
        parts
            .iter()
            .any(|p| p.get(k).and_then(Value::as_bool).unwrap_or(false))
    };
    // The states, each with its executions, merged by their text.
    let mut states: BTreeMap<String, (Value, u64)> = BTreeMap::new();
    for p in &parts {
        let list = p
            .get("states")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let counts = p
            .get("state_counts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (s, n) in list.into_iter().zip(counts) {
            let e = states.entry(s.to_string()).or_insert((s, 0));
            e.1 += n.as_u64().unwrap_or(0);
        }
    }
    let (positive, negative) = (sum("positive"), sum("negative"));
    let quantifier = first
        .get("quantifier")
        .and_then(Value::as_str)
        .unwrap_or("exists");
    let ok = match quantifier {
        "~exists" => positive == 0,
        "forall" => negative == 0,
        _ => positive > 0,
    };
    let observation = if positive == 0 {
        "Never"
    } else if negative == 0 {
        "Always"
    } else {
        "Sometimes"
    };
    let race_between = parts
        .iter()
        .filter_map(|p| p.get("race_between").and_then(Value::as_str))
        .min();
    let time = |agg: fn(f64, f64) -> f64| {
        parts
            .iter()
            .filter_map(|p| p.get("time_ms").and_then(Value::as_f64))
            .fold(0.0, agg)
    };
    let mut m = Map::new();
    m.insert("name".into(), first["name"].clone());
    m.insert("model".into(), first["model"].clone());
    m.insert(
        "states".into(),
        Value::Array(states.values().map(|(s, _)| s.clone()).collect()),
    );
    m.insert(
        "state_counts".into(),
        json!(states.values().map(|(_, n)| *n).collect::<Vec<_>>()),
    );
    m.insert("quantifier".into(), json!(quantifier));
    m.insert("shards".into(), json!(parts.len()));
    m.insert("ok".into(), json!(ok));
    m.insert("observation".into(), json!(observation));
    m.insert("positive".into(), json!(positive));
    m.insert("negative".into(), json!(negative));
    m.insert("race".into(), json!(any("race")));
    m.insert("race_between".into(), json!(race_between));
    for k in [
        "executions",
        "blocked",
        "bound_hits",
        "over_preemption_bound",
        "pruned_by_preemption_bound",
    ] {
        m.insert(k.into(), json!(sum(k)));
    }
    m.insert("cut".into(), json!(any("cut")));
    // Wall time: the slowest shard's; work: all of them.
    m.insert("time_ms".into(), json!(time(f64::max)));
    m.insert("shard_time_ms".into(), json!(time(|a, b| a + b)));
    m
}

/// A merged summary as a line of text.
fn text_line(m: &Map<String, Value>) -> String {
    format!(
        "{} ({}): {} executions ({} blocked) from {} shards; observation {}, condition {}{}",
        m["name"].as_str().unwrap_or("?"),
        m["model"].as_str().unwrap_or("?"),
        m["executions"],
        m["blocked"],
        m["shards"],
        m["observation"].as_str().unwrap_or("?"),
        if m["ok"].as_bool() == Some(true) {
            "holds"
        } else {
            "fails"
        },
        match m["race_between"].as_str() {
            Some(r) => format!("; data race between {r}"),
            None => String::new(),
        }
    )
}
