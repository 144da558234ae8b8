//! `loom::model` and `loom::model::Builder`.

use std::path::PathBuf;
use std::time::Duration;

/// loom's exploration settings. c11check explores each execution once by
/// reads-from; `preemption_bound` (`LOOM_MAX_PREEMPTIONS`) bounds it as in
/// loom (every execution loom reaches within the bound is explored; see
/// `c11check::model::Builder::preemption_bound`), `max_duration` is
/// honoured, and the bounds that exist to tame loom's own search
/// (`max_branches`, `max_permutations`, `max_threads`) are accepted.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Builder {
    pub max_threads: usize,
    pub max_branches: usize,
    pub max_permutations: Option<usize>,
    pub max_duration: Option<Duration>,
    pub preemption_bound: Option<usize>,
    pub checkpoint_file: Option<PathBuf>,
    pub checkpoint_interval: usize,
    pub expect_explicit_explore: bool,
    pub location: bool,
    pub log: bool,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// Defaults (and loom's `LOOM_MAX_DURATION`, `LOOM_LOG` variables).
    pub fn new() -> Self {
        let env = |k: &str| std::env::var(k).ok();
        Builder {
            max_threads: crate::MAX_THREADS,
            max_branches: 1_000,
            max_permutations: None,
            max_duration: env("LOOM_MAX_DURATION")
                .and_then(|v| v.parse().ok())
                .map(Duration::from_secs),
            preemption_bound: env("LOOM_MAX_PREEMPTIONS").and_then(|v| v.parse().ok()),
            checkpoint_file: None,
            checkpoint_interval: 20_000,
            expect_explicit_explore: false,
            location: false,
            log: env("LOOM_LOG").is_some(),
        }
    }

    /// Accepted for compatibility.
    pub fn checkpoint_file(&mut self, file: &str) -> &mut Self {
        self.checkpoint_file = Some(file.into());
        self
    }

    /// Explores `f`; panics with c11check's report on the first bug.
    pub fn check<F>(&self, f: F)
    where
        F: Fn() + Sync + Send + 'static,
    {
        let mut b = c11check::model::Builder::new();
        if let Some(d) = self.max_duration {
            b = b.max_duration(d);
        }
        if let Some(k) = self.preemption_bound {
            b = b.preemption_bound(k.min(u32::MAX as usize) as u32);
        }
        b.log |= self.log;
        b.check(f)
    }
}

/// Explores every execution of `f` (loom's `model`).
pub fn model<F>(f: F)
where
    F: Fn() + Sync + Send + 'static,
{
    Builder::new().check(f)
}
