//! `usage.daily`, decided: the window of days asked for (the user's days),
//! and each session's days added up by day and by session. The Gateway
//! asks the sessions active in the window; each keeps its own days
//! (`usage_days`, counted as its model calls answer).

use gsv_protocol::dates::CivilDate;
use gsv_protocol::{DayUsage, SessionUsage, TokenCounts, UsageDailyResult};

/// Days asked for when the request says nothing.
pub const DEFAULT_DAYS: u32 = 30;
/// At most this many days.
pub const MAX_DAYS: u32 = 366;

/// The `days` days ending with `today` (`YYYY-MM-DD`), oldest first.
pub fn window(today: &str, days: Option<u32>) -> Vec<String> {
    let days = days.unwrap_or(DEFAULT_DAYS).clamp(1, MAX_DAYS);
    let Some(end) = parse_day(today) else {
        return vec![today.to_string()];
    };
    let end = end.epoch_days();
    (0..i64::from(days))
        .rev()
        .map(|back| CivilDate::from_epoch_days(end - back).to_string())
        .collect()
}

fn parse_day(day: &str) -> Option<CivilDate> {
    let mut parts = day.splitn(3, '-');
    let year = parts.next()?.parse().ok()?;
    let month = parts.next()?.parse().ok()?;
    let day = parts.next()?.parse().ok()?;
    Some(CivilDate { year, month, day })
}

/// Each session's days (any order, days outside `window` ignored) added
/// up by day over `window` and by session.
pub fn daily(window: &[String], sessions: Vec<(String, Vec<DayUsage>)>) -> UsageDailyResult {
    let mut days: Vec<DayUsage> = window
        .iter()
        .map(|day| DayUsage {
            day: day.clone(),
            tokens: TokenCounts::default(),
        })
        .collect();
    let mut per_session = Vec::new();
    for (session_key, session_days) in sessions {
        let mut tokens = TokenCounts::default();
        for d in session_days {
            let Some(slot) = days.iter_mut().find(|slot| slot.day == d.day) else {
                continue;
            };
            slot.tokens = slot.tokens.plus(&d.tokens);
            tokens = tokens.plus(&d.tokens);
        }
        if tokens.total > 0 {
            per_session.push(SessionUsage {
                session_key,
                tokens,
            });
        }
    }
    per_session.sort_by(|a, b| {
        let cost = |s: &SessionUsage| s.tokens.cost.unwrap_or(0.0);
        cost(b)
            .total_cmp(&cost(a))
            .then(b.tokens.total.cmp(&a.tokens.total))
            .then(a.session_key.cmp(&b.session_key))
    });
    let total = days
        .iter()
        .fold(TokenCounts::default(), |all, d| all.plus(&d.tokens));
    UsageDailyResult {
        days,
        sessions: per_session,
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(input: u64, cost: Option<f64>) -> TokenCounts {
        TokenCounts {
            input,
            total: input,
            cost,
            ..Default::default()
        }
    }

    fn day(day: &str, input: u64, cost: Option<f64>) -> DayUsage {
        DayUsage {
            day: day.into(),
            tokens: tokens(input, cost),
        }
    }

    #[test]
    fn the_window_ends_today_across_a_month_and_a_leap_day() {
        assert_eq!(
            window("2028-03-01", Some(3)),
            ["2028-02-28", "2028-02-29", "2028-03-01"]
        );
        assert_eq!(window("2026-11-29", None).len(), 30);
        assert_eq!(window("2026-11-29", Some(0)), ["2026-11-29"]);
        assert_eq!(window("2026-11-29", Some(5000)).len(), 366);
    }

    #[test]
    fn days_and_sessions_add_up() {
        let window = window("2026-11-29", Some(3));
        let result = daily(
            &window,
            vec![
                (
                    "agent:main:main".into(),
                    vec![
                        day("2026-11-27", 100, Some(0.5)),
                        day("2026-11-29", 50, Some(0.25)),
                        day("2026-10-01", 999, Some(9.0)), // before the window
                    ],
                ),
                (
                    "agent:main:cron:j1".into(),
                    vec![day("2026-11-29", 500, None)],
                ),
                ("agent:main:idle".into(), vec![]),
            ],
        );
        assert_eq!(
            result,
            UsageDailyResult {
                days: vec![
                    day("2026-11-27", 100, Some(0.5)),
                    day("2026-11-28", 0, None),
                    day("2026-11-29", 550, Some(0.25)),
                ],
                sessions: vec![
                    SessionUsage {
                        session_key: "agent:main:main".into(),
                        tokens: tokens(150, Some(0.75)),
                    },
                    SessionUsage {
                        session_key: "agent:main:cron:j1".into(),
                        tokens: tokens(500, None),
                    },
                ],
                total: tokens(650, Some(0.75)),
            }
        );
    }
}
