//! Truncation of injected workspace files: each file is capped, and so is
//! the sum of all of them, on character boundaries, with a marker.

use crate::config::Config;

/// The caps, in characters (Unicode scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLimits {
    /// `workspace.maxFileChars` (default 12 000).
    pub max_file_chars: usize,
    /// `workspace.maxTotalChars` (default 60 000).
    pub max_total_chars: usize,
}

impl Default for PromptLimits {
    fn default() -> Self {
        Self {
            max_file_chars: 12_000,
            max_total_chars: 60_000,
        }
    }
}

impl PromptLimits {
    /// The caps from `workspace.maxFileChars` / `workspace.maxTotalChars`.
    pub fn from_config(config: &Config) -> Self {
        let d = Self::default();
        let get = |path, default| {
            config
                .u64_at(path)
                .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        Self {
            max_file_chars: get("workspace.maxFileChars", d.max_file_chars),
            max_total_chars: get("workspace.maxTotalChars", d.max_total_chars),
        }
    }
}

/// Spends the total budget file by file, in injection order.
pub(crate) struct Budget {
    limits: PromptLimits,
    used: usize,
}

impl Budget {
    pub fn new(limits: PromptLimits) -> Self {
        Self { limits, used: 0 }
    }

    /// The text to inject for file `label`: trimmed, cut to what the caps
    /// allow, with a `[truncated]` marker when cut. `None` when the file
    /// is blank (its section is dropped).
    pub fn take(&mut self, label: &str, content: &str) -> Option<String> {
        let text = content.trim();
        if text.is_empty() {
            return None;
        }
        let cap = self
            .limits
            .max_file_chars
            .min(self.limits.max_total_chars.saturating_sub(self.used));
        let total = text.chars().count();
        if total <= cap {
            self.used += total;
            return Some(text.to_string());
        }
        self.used += cap;
        let end = text.char_indices().nth(cap).map_or(text.len(), |(i, _)| i);
        let kept = text[..end].trim_end();
        Some(match kept.is_empty() {
            true => format!(
                "[truncated] {label} ({total} characters) is left out: the workspace budget is spent. Read it with gsv__ReadFile."
            ),
            false => format!(
                "{kept}\n\n[truncated] Only the first {cap} of {total} characters of {label} are shown; read the whole file with gsv__ReadFile."
            ),
        })
    }
}
