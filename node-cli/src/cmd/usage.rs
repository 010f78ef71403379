//! `gsv usage [--days N] [--json]`: what the agent's model calls used and
//! cost, day by day and session by session (`usage.daily`).

use super::{print_answer, GatewayTarget};
use anyhow::Result;
use clap::Args;
use gsv_protocol::{method, TokenCounts, UsageDailyParams, UsageDailyResult};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  gsv usage              the last 30 days
  gsv usage --days 7     the last week")]
pub struct UsageArgs {
    /// How many days back, today included (1–366)
    #[arg(long, default_value_t = 30)]
    pub days: u32,
    /// Print the gateway's whole answer as JSON
    #[arg(long)]
    pub json: bool,
}

pub async fn run(target: &GatewayTarget, args: UsageArgs) -> Result<()> {
    let conn = target.connect().await?;
    let params = UsageDailyParams {
        days: Some(args.days),
    };
    print_answer::<method::UsageDaily>(&conn, &params, args.json, render_usage).await
}

/// The days with calls, then the sessions, then the total: tokens, the
/// share read from a prompt cache, and the estimated cost.
pub fn render_usage(r: &UsageDailyResult) -> String {
    let used: Vec<_> = r.days.iter().filter(|d| d.tokens.total > 0).collect();
    if used.is_empty() {
        return format!("No model calls in the last {} days.\n", r.days.len());
    }
    let mut out = format!(
        "{:<12}  {:>10}  {:>10}  {:>6}  {:>10}\n",
        "Day", "Input", "Output", "Cached", "Cost"
    );
    for d in used {
        out.push_str(&row(&d.day, &d.tokens));
    }
    out.push_str(&row("Total", &r.total));
    out.push_str("\nSessions\n");
    for s in &r.sessions {
        out.push_str(&format!("  {}  {}\n", s.session_key, summary(&s.tokens)));
    }
    out
}

/// Input counts everything the model read, cached or not.
fn row(label: &str, t: &TokenCounts) -> String {
    format!(
        "{label:<12}  {:>10}  {:>10}  {:>5.0}%  {:>10}\n",
        t.input + t.cache_read + t.cache_write,
        t.output,
        100.0 * t.cached_share(),
        t.cost_text().unwrap_or_else(|| "-".into())
    )
}

fn summary(t: &TokenCounts) -> String {
    let mut s = format!(
        "{} in ({:.0}% cached), {} out",
        t.input + t.cache_read + t.cache_write,
        100.0 * t.cached_share(),
        t.output
    );
    if let Some(cost) = t.cost_text() {
        s.push_str(&format!(", {cost}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{DayUsage, SessionUsage};

    fn tokens(input: u64, read: u64, output: u64, cost: Option<f64>) -> TokenCounts {
        TokenCounts {
            input,
            output,
            total: input + read + output,
            cache_read: read,
            cache_write: 0,
            cost,
        }
    }

    #[test]
    fn days_with_calls_sessions_and_the_total() {
        let r = UsageDailyResult {
            days: vec![
                DayUsage {
                    day: "2026-11-28".into(),
                    tokens: TokenCounts::default(),
                },
                DayUsage {
                    day: "2026-11-29".into(),
                    tokens: tokens(100, 900, 50, Some(0.0123)),
                },
            ],
            sessions: vec![SessionUsage {
                session_key: "agent:main:main".into(),
                tokens: tokens(100, 900, 50, Some(0.0123)),
            }],
            total: tokens(100, 900, 50, Some(0.0123)),
        };
        assert_eq!(
            render_usage(&r),
            "\
Day                Input      Output  Cached        Cost
2026-11-29          1000          50     90%    ~$0.0123
Total               1000          50     90%    ~$0.0123

Sessions
  agent:main:main  1000 in (90% cached), 50 out, ~$0.0123
"
        );
        let none = UsageDailyResult {
            days: r.days[..1].to_vec(),
            ..Default::default()
        };
        assert_eq!(render_usage(&none), "No model calls in the last 1 days.\n");
    }
}
