//! Dreaming: the nightly sweep that promotes the memories recalled often,
//! on many days and lately into MEMORY.md, and keeps a diary in DREAMS.md.

/// What the index knows of one memory's recalls.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallStats {
    pub uri: String,
    pub abstract_text: String,
    pub hits: u64,
    /// Distinct days (in the user's zone) it was recalled on.
    pub days: u64,
    pub last_recalled_ms: i64,
}

/// Score at or above which a memory is promoted (configurable).
pub const DEFAULT_THRESHOLD: f64 = 0.6;

const DAY_MS: f64 = 86_400_000.0;

/// 0..1: distinct days weigh most (a memory needed again and again),
/// then hits (diminishing), then recency (halving every week).
pub fn score(s: &RecallStats, now_ms: i64) -> f64 {
    let days = (s.days as f64 / 5.0).min(1.0);
    let hits = ((1.0 + s.hits as f64).ln() / 11f64.ln()).min(1.0);
    let age_days = ((now_ms - s.last_recalled_ms).max(0) as f64) / DAY_MS;
    let recency = 0.5f64.powf(age_days / 7.0);
    0.4 * days + 0.35 * hits + 0.25 * recency
}

/// A memory chosen for promotion, with its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Promotion {
    pub stats: RecallStats,
    pub score: f64,
}

/// The memories at or above `threshold`, best first.
pub fn choose(stats: &[RecallStats], now_ms: i64, threshold: f64) -> Vec<Promotion> {
    let mut chosen: Vec<Promotion> = stats
        .iter()
        .map(|s| Promotion {
            stats: s.clone(),
            score: score(s, now_ms),
        })
        .filter(|p| p.score >= threshold)
        .collect();
    chosen.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.stats.uri.cmp(&b.stats.uri))
    });
    chosen
}

/// A bullet's text without its marker and any `_(score=…)_` note: what
/// "already there" is compared on.
fn bullet_text(line: &str) -> Option<&str> {
    let text = line.trim().strip_prefix("- ")?;
    let text = match text.rfind(" _(score=") {
        Some(i) => &text[..i],
        None => text,
    };
    Some(text.trim())
}

/// MEMORY.md with a `## Dreamed {stamp}` section of the promotions whose
/// text is not a bullet there yet; `None` when none is new. The promoted
/// ones come back too.
pub fn promote_into(
    memory_md: &str,
    promotions: &[Promotion],
    stamp: &str,
) -> (Option<String>, Vec<Promotion>) {
    let mut present: Vec<String> = memory_md
        .lines()
        .filter_map(bullet_text)
        .map(str::to_string)
        .collect();
    let mut added = Vec::new();
    let mut lines = Vec::new();
    for p in promotions {
        let text = p.stats.abstract_text.trim();
        if text.is_empty() || present.iter().any(|l| l == text) {
            continue;
        }
        present.push(text.to_string());
        lines.push(format!(
            "- {text} _(score={:.2}, hits={}, days={})_",
            p.score, p.stats.hits, p.stats.days
        ));
        added.push(p.clone());
    }
    if lines.is_empty() {
        return (None, added);
    }
    let mut out = memory_md.trim_end().to_string();
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(&format!("## Dreamed {stamp}\n{}\n", lines.join("\n")));
    (Some(out), added)
}

/// The DREAMS.md entry of one sweep.
pub fn diary_entry(stamp: &str, considered: usize, promoted: &[Promotion]) -> String {
    let mut entry = format!(
        "## {stamp}\n\nConsidered {considered} recalled {}; promoted {}.\n",
        match considered {
            1 => "memory",
            _ => "memories",
        },
        promoted.len()
    );
    for p in promoted {
        entry.push_str(&format!(
            "- {} _(score={:.2}, hits={}, days={})_ ← {}\n",
            p.stats.abstract_text.trim(),
            p.score,
            p.stats.hits,
            p.stats.days,
            p.stats.uri
        ));
    }
    entry
}

/// DREAMS.md with `entry` appended (a title on a new diary).
pub fn append_diary(dreams_md: &str, entry: &str) -> String {
    let head = match dreams_md.trim().is_empty() {
        true => "# Dreams\n\nWhat each nightly sweep of long-term memory promoted into MEMORY.md."
            .to_string(),
        false => dreams_md.trim_end().to_string(),
    };
    format!("{head}\n\n{entry}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_764_000_000_000;

    fn s(uri: &str, text: &str, hits: u64, days: u64, ago_days: i64) -> RecallStats {
        RecallStats {
            uri: uri.into(),
            abstract_text: text.into(),
            hits,
            days,
            last_recalled_ms: NOW - ago_days * 86_400_000,
        }
    }

    #[test]
    fn days_hits_and_recency_make_the_score() {
        let three_days = s("a", "x", 3, 3, 0);
        let one_day = s("b", "y", 1, 1, 0);
        assert!(
            (score(&three_days, NOW) - (0.4 * 0.6 + 0.35 * (4f64.ln() / 11f64.ln()) + 0.25)).abs()
                < 1e-9
        );
        assert!(score(&three_days, NOW) >= DEFAULT_THRESHOLD);
        assert!(score(&one_day, NOW) < DEFAULT_THRESHOLD);
        // A month unrecalled loses most of its recency.
        assert!(score(&s("c", "z", 3, 3, 30), NOW) < DEFAULT_THRESHOLD);
        assert_eq!(
            choose(&[one_day, three_days.clone()], NOW, DEFAULT_THRESHOLD)
                .into_iter()
                .map(|p| p.stats)
                .collect::<Vec<_>>(),
            [three_days]
        );
    }

    #[test]
    fn promotions_are_appended_once_under_a_dated_heading() {
        let p = |uri: &str, text: &str| Promotion {
            stats: s(uri, text, 5, 3, 0),
            score: 0.42,
        };
        let memory = "# Memory\n\n## People\n- Luis prefers Spanish.\n";
        let (out, added) = promote_into(
            memory,
            &[
                p("a", "Luis prefers Spanish."),
                p("b", "User's timezone is America/Bogota"),
            ],
            "2026-04-23 03:00 UTC",
        );
        assert_eq!(
            out.as_deref(),
            Some(
                "# Memory\n\n## People\n- Luis prefers Spanish.\n\n## Dreamed 2026-04-23 03:00 UTC\n\
                 - User's timezone is America/Bogota _(score=0.42, hits=5, days=3)_\n"
            )
        );
        assert_eq!(added.len(), 1);
        // Dreamed again: already there, with its note; nothing changes.
        let (again, none) = promote_into(
            out.as_deref().unwrap_or_default(),
            &added,
            "2026-04-24 03:00 UTC",
        );
        assert_eq!((again, none.len()), (None, 0));
    }

    #[test]
    fn the_diary_says_what_each_sweep_did() {
        let p = Promotion {
            stats: s(
                "ctx://d/users/u/memories/profile/tz",
                "User is in Bogota",
                5,
                3,
                0,
            ),
            score: 0.7,
        };
        let entry = diary_entry("2026-04-23 03:00 UTC", 4, &[p]);
        assert_eq!(
            entry,
            "## 2026-04-23 03:00 UTC\n\nConsidered 4 recalled memories; promoted 1.\n\
             - User is in Bogota _(score=0.70, hits=5, days=3)_ ← ctx://d/users/u/memories/profile/tz\n"
        );
        assert_eq!(
            append_diary("", &entry),
            format!("# Dreams\n\nWhat each nightly sweep of long-term memory promoted into MEMORY.md.\n\n{entry}")
        );
        assert_eq!(
            append_diary("# Dreams\n\nold\n", "new\n"),
            "# Dreams\n\nold\n\nnew\n"
        );
    }
}

/// When the nightly sweep next runs: the next `at_hour:00` in the user's
/// zone strictly after `now_ms`.
pub fn next_sweep_at(tz: &dyn crate::time::TimeZone, now_ms: i64, at_hour: u32) -> i64 {
    use crate::time::{local_date_time, local_to_utc, LocalDate};
    let today = local_date_time(tz, now_ms).date;
    let at = local_to_utc(tz, today, at_hour, 0);
    match at > now_ms {
        true => at,
        false => local_to_utc(
            tz,
            LocalDate::from_epoch_days(today.epoch_days() + 1),
            at_hour,
            0,
        ),
    }
}

/// A dream's heading stamp: `YYYY-MM-DD HH:MM ZONE`.
pub fn stamp(tz: &dyn crate::time::TimeZone, zone: &str, now_ms: i64) -> String {
    format!(
        "{} {} {zone}",
        crate::time::date_string(tz, now_ms),
        crate::time::hh_mm(tz, now_ms)
    )
}

#[cfg(test)]
mod sweep_tests {
    use super::*;
    use crate::time::FixedOffset;

    #[test]
    fn the_sweep_runs_next_at_the_local_hour() {
        // 2025-03-17T10:00:00Z.
        let now = 1_742_205_600_000;
        let hour = 3_600_000;
        assert_eq!(next_sweep_at(&crate::time::Utc, now, 3), now + 17 * hour);
        assert_eq!(next_sweep_at(&crate::time::Utc, now, 11), now + hour);
        // UTC+2: 12:00 local; 03:00 local tomorrow is 01:00Z tomorrow.
        assert_eq!(
            next_sweep_at(&FixedOffset(2 * hour), now, 3),
            now + 15 * hour
        );
        assert_eq!(
            stamp(&FixedOffset(2 * hour), "Europe/Paris", now),
            "2025-03-17 12:00 Europe/Paris"
        );
    }
}
