//! A test's final states as herd7 writes them: the keys (registers and
//! locations the condition and the `locations` line name), their values in
//! one execution, and the notation (`0:r0=1; [x]=2;`).

use crate::ast::*;
use c11check_model::{Loc, Value};
use std::fmt::Write as _;

/// A state (values in `keys` order) as herd prints it: `0:r0=1; [x]=2;`.
pub fn state_line(keys: &[Key], vals: &[Value]) -> String {
    let mut s = String::new();
    for (k, v) in keys.iter().zip(vals) {
        let _ = write!(s, "{}={}; ", k.herd_name(), v);
    }
    s.trim_end().to_string()
}

/// The condition as herd prints it.
pub fn condition_text(c: &Condition) -> String {
    fn prop(p: &Prop, top: bool) -> String {
        match p {
            Prop::True => "true".into(),
            Prop::False => "false".into(),
            Prop::Eq(k, v) => format!("{}={}", k.herd_name(), v),
            Prop::Not(a) => format!("~{}", prop(a, false)),
            Prop::And(a, b) => {
                let s = format!("{} /\\ {}", prop(a, false), prop(b, false));
                if top {
                    s
                } else {
                    format!("({s})")
                }
            }
            Prop::Or(a, b) => {
                let s = format!("{} \\/ {}", prop(a, false), prop(b, false));
                if top {
                    s
                } else {
                    format!("({s})")
                }
            }
        }
    }
    let q = match c.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    };
    format!("{q} ({})", prop(&c.prop, true))
}

/// The keys of a state: those of the condition and the `locations` line, sorted
/// as herd sorts them (registers by thread, then locations).
pub fn state_keys(test: &LitmusTest) -> Vec<Key> {
    let mut keys = Vec::new();
    test.condition.prop.keys(&mut keys);
    for k in &test.extra_keys {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    keys.sort();
    keys
}

/// The locations among `keys`, whose final value is observed.
pub fn observed_locs(test: &LitmusTest, keys: &[Key]) -> Vec<Loc> {
    keys.iter()
        .filter_map(|k| match k {
            Key::Loc(n) => test
                .locations
                .iter()
                .position(|l| l == n)
                .map(|i| Loc(i as u32)),
            Key::Reg(..) => None,
        })
        .collect()
}

/// The value of each key in one execution.
pub fn state_of(
    test: &LitmusTest,
    keys: &[Key],
    locals: &dyn Fn(u32, &str) -> Value,
    final_loc: &dyn Fn(Loc) -> Value,
) -> Vec<Value> {
    keys.iter()
        .map(|k| match k {
            Key::Reg(t, r) => locals(*t, r),
            Key::Loc(name) => {
                let i = test.locations.iter().position(|l| l == name).unwrap();
                final_loc(Loc(i as u32))
            }
        })
        .collect()
}
