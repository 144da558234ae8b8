//! The workspace's rooms and which may use which (ARCHITECTURE.md, "Code
//! map"): inside each crate, the top-level modules (a file or a folder:
//! one concern each) form no cycle, and each uses only the rooms listed
//! before it. A module that starts using one listed after it, or a new
//! top-level module not listed, fails here; the message says which file
//! and what it names.
//!
//! Uses are read from the source: `crate::room::…` paths (in `use` lines
//! and in code, groups `crate::{a, b::C}` included), names the crate root
//! re-exports from a room (`crate::Name`), and `super::` paths that reach
//! the crate root. Comments and `#[cfg(test)]` modules are left out: a
//! test may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each crate's rooms, from the bottom up: a room may use those before it.
const ROOMS: &[(&str, &[&str])] = &[
    (
        "model",
        &[
            "bits",
            "event",
            "models",
            "graph",
            "consistency",
            "robust",
            "live_memory",
        ],
    ),
    (
        "explore",
        &[
            "config",
            "program",
            "step",
            "bound",
            "exhaustive",
            "random",
            "straight",
        ],
    ),
    (
        "runtime",
        &[
            "addr_table",
            "console",
            "site",
            "report",
            "settings",
            "cell",
            "protocol",
            "shared",
            "alloc",
            "replay",
            "panics",
            "operations",
            "watchdog",
            "fiber",
            "driver",
            "config",
            "condvar",
            "locks",
            "barrier",
            "once",
            "robust",
            "robust_live",
            "judge",
            "live_run",
            "run",
        ],
    ),
    (
        "litmus",
        &[
            "lexer", "ast", "parser", "herd", "interp", "states", "live_run", "run", "dynamic",
            "robust", "repair", "expect",
        ],
    ),
    ("c11check", &["hint", "cell", "sync", "thread", "model"]),
    ("axiomatic", &["rel"]),
    ("cli", &["programs", "merge"]),
    ("c-link", &[]),
    (
        "c-runtime",
        &["image", "process", "memory", "library", "start", "tsan"],
    ),
    (
        "loom",
        &[
            "alloc",
            "cell",
            "hint",
            "lazy_static",
            "sync",
            "thread",
            "future",
            "model",
        ],
    ),
];

/// The workspace's `crates/` folder.
fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/")
        .to_path_buf()
}

/// The source with comments and `#[cfg(test)]` items removed.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            // Skip the item that follows: to its closing brace, or its `;`.
            let mut depth = 0i32;
            let mut opened = false;
            for l in lines.by_ref() {
                let code = strip_comment(l);
                depth += code.matches('{').count() as i32 - code.matches('}').count() as i32;
                opened |= code.contains('{');
                if (opened && depth <= 0) || (!opened && code.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push_str(strip_comment(line));
        out.push('\n');
    }
    out
}

/// A line without its `//` comment (a `//` inside a string is rare enough
/// in `use` lines to ignore).
fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(i) if !line[..i].contains('"') => &line[..i],
        _ => line,
    }
}

/// The first segments of the paths a `crate::` or root-reaching `super::`
/// names: `room` of `crate::room::X`, each head of `crate::{a::X, B}`.
fn root_heads(code: &str, prefix: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        rest = &rest[i + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // A group: split at the top-level commas.
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        heads.push(head(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            heads.push(head(&item));
        } else {
            heads.push(head(rest));
        }
    }
    heads.retain(|h| !h.is_empty());
    heads
}

fn head(path: &str) -> String {
    path.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The rooms of a crate's `src` (top-level `.rs` files and folders, less
/// the crate root) and the files of each.
fn rooms_of(src: &Path) -> BTreeMap<String, Vec<(PathBuf, usize)>> {
    let mut rooms: BTreeMap<String, Vec<(PathBuf, usize)>> = BTreeMap::new();
    fn walk(
        dir: &Path,
        depth: usize,
        room: Option<&str>,
        out: &mut BTreeMap<String, Vec<(PathBuf, usize)>>,
    ) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            let r = room.map(str::to_string).unwrap_or_else(|| stem.clone());
            if p.is_dir() {
                walk(&p, depth + 1, Some(&r), out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                if depth == 0 && (stem == "lib" || stem == "main") {
                    continue;
                }
                if depth == 0 && stem == "bin" {
                    continue;
                }
                // How many `super::` reach the crate root from this file.
                let is_mod = stem == "mod";
                let module_depth = depth + usize::from(!is_mod);
                out.entry(r).or_default().push((p.clone(), module_depth));
            }
        }
    }
    walk(src, 0, None, &mut rooms);
    rooms.remove("bin");
    rooms
}

/// The names the crate root re-exports, with the room each comes from.
fn reexports(src: &Path, rooms: &BTreeSet<String>) -> BTreeMap<String, String> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .find(|p| p.exists())
        .expect("a crate root");
    let code = code_of(&std::fs::read_to_string(root).unwrap());
    let mut names = BTreeMap::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let Some(path) = stmt
            .strip_prefix("pub use ")
            .or_else(|| stmt.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let room = head(path);
        if !rooms.contains(&room) {
            continue;
        }
        let tail = match path.find('{') {
            Some(i) => &path[i + 1..],
            None => path.rsplit("::").next().unwrap(),
        };
        for item in tail.split([',', '}']) {
            let name = item.split(" as ").last().unwrap_or("").trim();
            let name = name.rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() && name != "self" && name != "*" {
                names.insert(name.to_string(), room.clone());
            }
        }
    }
    names
}

/// Each room's uses of other rooms, with where they are.
fn uses(crate_name: &str) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = crates_dir().join(crate_name).join("src");
    let rooms = rooms_of(&src);
    let names: BTreeSet<String> = rooms.keys().cloned().collect();
    let exported = reexports(&src, &names);
    let mut graph = BTreeMap::new();
    for (room, files) in &rooms {
        let edges: &mut BTreeMap<String, BTreeSet<String>> = graph.entry(room.clone()).or_default();
        for (file, depth) in files {
            let code = code_of(&std::fs::read_to_string(file).unwrap());
            let mut heads = root_heads(&code, "crate::");
            let to_root = "super::".repeat(*depth);
            heads.extend(root_heads(&code, &to_root));
            for h in heads {
                let target = if names.contains(&h) {
                    Some(h.clone())
                } else {
                    exported.get(&h).cloned()
                };
                if let Some(t) = target.filter(|t| t != room) {
                    let shown = file.strip_prefix(crates_dir()).unwrap_or(file);
                    edges
                        .entry(t)
                        .or_default()
                        .insert(format!("{} (`{h}`)", shown.display()));
                }
            }
        }
    }
    graph
}

#[test]
fn each_room_uses_only_the_rooms_below_it() {
    let mut problems = Vec::new();
    for (krate, order) in ROOMS {
        let graph = uses(krate);
        let listed: BTreeSet<&str> = order.iter().copied().collect();
        for room in graph.keys() {
            if !listed.contains(room.as_str()) {
                problems.push(format!(
                    "{krate}: the room `{room}` is not in this test's list (place it among the rooms it may use)"
                ));
            }
        }
        for room in order.iter() {
            if !graph.contains_key(*room) {
                problems.push(format!("{krate}: the listed room `{room}` does not exist"));
            }
        }
        let rank = |r: &str| order.iter().position(|x| *x == r);
        for (room, edges) in &graph {
            for (target, places) in edges {
                if let (Some(a), Some(b)) = (rank(room), rank(target)) {
                    if b > a {
                        problems.push(format!(
                            "{krate}: `{room}` uses `{target}`, a room above it, in {}",
                            places.iter().cloned().collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The crates whose root only declares rooms and re-exports (and, for the
/// C runtime, the macros its rooms share, which must come first): code in
/// the root would be a room the check above cannot place.
const ROOTS_WITHOUT_CODE: &[&str] = &["model", "explore", "runtime", "c-runtime"];

/// The top-level items of a crate root that are neither a module, a use,
/// nor a macro definition: (line, text).
fn root_code(text: &str) -> Vec<(usize, String)> {
    let code = code_of(text);
    let mut found = Vec::new();
    let mut depth = 0i32;
    for (n, line) in code.lines().enumerate() {
        let at_top = depth == 0;
        depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
        let t = line.trim();
        if !at_top || t.is_empty() || line.starts_with(char::is_whitespace) {
            continue;
        }
        let allowed = [
            "#",
            "mod ",
            "pub mod ",
            "use ",
            "pub use ",
            "pub(crate) use ",
            "macro_rules!",
            "}",
        ];
        if !allowed.iter().any(|a| t.starts_with(a)) {
            found.push((n + 1, t.to_string()));
        }
    }
    found
}

#[test]
fn crate_roots_hold_no_code_of_their_own() {
    let mut problems = Vec::new();
    for krate in ROOTS_WITHOUT_CODE {
        let root = crates_dir().join(krate).join("src/lib.rs");
        for (line, text) in root_code(&std::fs::read_to_string(&root).unwrap()) {
            problems.push(format!(
                "{}:{line}: `{text}` belongs in a room (the root only declares rooms and re-exports)",
                root.display()
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The check reads what it should: a use in code counts, one in a comment
/// or a test module does not, groups and re-exported names are followed.
#[test]
fn the_reading_of_uses_is_right() {
    let code = code_of(
        "use crate::graph::X; // crate::live\n\
         /// [`crate::robust`]\n\
         fn f() { crate::bits::g(); let _ = crate::{models::M, Event}; }\n\
         #[cfg(test)]\n\
         mod tests {\n    use crate::consistency::Y;\n}\n\
         fn h() { super::event::E; }\n",
    );
    assert_eq!(
        root_heads(&code, "crate::"),
        ["graph", "bits", "models", "Event"]
    );
    assert_eq!(root_heads(&code, "super::"), ["event"]);
    let root = "//! Doc.\nmod a;\npub use a::X;\nmacro_rules! m {\n    () => { fn f() {} };\n}\npub fn g() {}\n";
    assert_eq!(root_code(root), [(7, "pub fn g() {}".to_string())]);
    let model = uses("model");
    assert!(model["consistency"].contains_key("graph"));
    assert!(model["graph"].contains_key("event"));
}
