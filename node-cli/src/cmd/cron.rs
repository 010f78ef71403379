//! `gsv cron …` and `gsv heartbeat …`: the agent's scheduled jobs and
//! reminders, and its heartbeats. Schedules are written as people write
//! them (`--in 2h`, `--at "tomorrow 9am"`, `--every 30m`, `--cron "0 9 * * 1-5"`)
//! and read by the gateway's normalizer, which also words the answers in
//! the user's time zone.

use super::{print_answer, GatewayTarget};
use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use gsv_protocol::cron::*;
use gsv_protocol::*;
use serde_json::{json, Map, Value};

#[derive(Debug, Subcommand)]
pub enum CronCommand {
    /// Whether cron is on, how many jobs, the next run
    Status {
        #[arg(long)]
        json: bool,
    },
    /// The jobs, next run first, with their schedules in words
    List {
        /// Only this agent's jobs
        #[arg(long)]
        agent: Option<String>,
        /// Leave out disabled jobs
        #[arg(long)]
        enabled_only: bool,
        #[arg(long)]
        json: bool,
    },
    /// Add a job or a reminder
    #[command(after_help = "\
Examples:
  gsv cron add --in 20m \"take the bread out\"
  gsv cron add --at \"tomorrow 9am\" \"call the dentist\"
  gsv cron add --cron \"0 8 * * 1-5\" --task \"summarize my inbox\" --model openai/gpt-4.1-mini
  gsv cron add --every 2h --task --no-deliver \"tidy MEMORY.md\"")]
    Add {
        /// What the agent is told when the job fires
        text: String,
        #[command(flatten)]
        schedule: ScheduleArgs,
        #[command(flatten)]
        options: JobArgs,
    },
    /// Change a job: any of add's options, or --enable/--disable
    Edit {
        id: String,
        /// New text
        #[arg(long)]
        text: Option<String>,
        #[command(flatten)]
        schedule: ScheduleArgs,
        #[command(flatten)]
        options: JobArgs,
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
    },
    /// Remove a job and its run history
    Rm { id: String },
    /// Run a job now, whatever its schedule
    Run { id: String },
    /// Past runs, newest first: status, how late, how long, the answer
    Runs {
        /// Only this job's runs
        id: Option<String>,
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
}

/// When a job runs (one of them).
#[derive(Debug, Args)]
pub struct ScheduleArgs {
    /// Once, after this long: 90s, 20m, 2h, 1d
    #[arg(long = "in", value_name = "DURATION", group = "when")]
    in_: Option<String>,
    /// Once, at this time: "tomorrow 9am", "today 18:30", "2026-12-24 18:00", ISO
    #[arg(long, value_name = "WHEN", group = "when")]
    at: Option<String>,
    /// Repeatedly: 30m, 2h, 1d (at least a minute)
    #[arg(long, value_name = "DURATION", group = "when")]
    every: Option<String>,
    /// A 5-field cron expression, read in --tz (default: your userTimezone)
    #[arg(long, value_name = "EXPR", group = "when")]
    cron: Option<String>,
    /// IANA zone for --cron (Europe/Paris)
    #[arg(long, requires = "cron")]
    tz: Option<String>,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    /// A name (default: the start of the text)
    #[arg(long)]
    name: Option<String>,
    /// The agent whose job it is (default: the default agent)
    #[arg(long)]
    agent: Option<String>,
    /// Run as a task in its own session (`agent:ID:cron:JOB`) rather than
    /// as a note in the main conversation
    #[arg(long)]
    task: bool,
    /// The task's model (provider/id)
    #[arg(long, requires = "task")]
    model: Option<String>,
    /// The task's reasoning level (off, low, medium, high…)
    #[arg(long, requires = "task")]
    thinking: Option<String>,
    /// Stop the task's run after this many seconds
    #[arg(long, requires = "task", value_name = "SECONDS")]
    timeout: Option<u32>,
    /// Deliver the task's answer to this channel (with --to)
    #[arg(long, requires = "task")]
    channel: Option<String>,
    /// …to this chat (a user or chat id on the channel)
    #[arg(long, requires = "task")]
    to: Option<String>,
    /// Keep the task's answer to itself
    #[arg(long, requires = "task")]
    no_deliver: bool,
    /// A one-off job is deleted after it ran (its runs stay)
    #[arg(long)]
    delete_after_run: bool,
}

#[derive(Debug, Subcommand)]
pub enum HeartbeatCommand {
    /// Each agent's heartbeat: interval, next and last beat, last outcome
    Status {
        #[arg(long)]
        json: bool,
    },
    /// A beat now, whatever active hours or HEARTBEAT.md say
    Trigger { agent: Option<String> },
    /// Start the beats anew from now
    Start,
}

/// `20m` → `{everyMinutes: 20}`-style milliseconds.
pub fn duration_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit())?;
    let n: i64 = t[..split].parse().ok()?;
    let unit = match t[split..].trim() {
        "s" | "sec" | "secs" | "second" | "seconds" => 1000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return None,
    };
    Some(n * unit)
}

/// The `schedule` the gateway normalizes, if one was given.
pub fn schedule_value(s: &ScheduleArgs) -> Result<Option<Value>> {
    Ok(Some(match (&s.in_, &s.at, &s.every, &s.cron) {
        (Some(d), ..) => json!({"kind": "at", "in": d}),
        (_, Some(at), ..) => json!({"kind": "at", "at": at}),
        (_, _, Some(every), _) => match duration_ms(every) {
            Some(ms) => json!({"kind": "every", "everyMs": ms}),
            None => bail!("--every takes a duration such as 30m, 2h or 1d"),
        },
        (_, _, _, Some(expr)) => match &s.tz {
            Some(tz) => json!({"kind": "cron", "expr": expr, "tz": tz}),
            None => json!({"kind": "cron", "expr": expr}),
        },
        _ => return Ok(None),
    }))
}

/// The `spec` for `text` with the job options.
pub fn spec_value(text: &str, o: &JobArgs) -> Value {
    if !o.task {
        return json!({"kind": "systemEvent", "text": text});
    }
    let mut spec = Map::new();
    spec.insert("kind".into(), "task".into());
    spec.insert("message".into(), text.into());
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            spec.insert(k.into(), v);
        }
    };
    put("model", o.model.clone().map(Value::from));
    put("thinking", o.thinking.clone().map(Value::from));
    put("timeoutSeconds", o.timeout.map(Value::from));
    put("channel", o.channel.clone().map(Value::from));
    put("to", o.to.clone().map(Value::from));
    put("deliver", o.no_deliver.then_some(Value::Bool(false)));
    Value::Object(spec)
}

fn time(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".into(), dates_utc)
}

/// `2026-11-24 09:00 UTC` for run history (the list's own times are
/// worded by the gateway in the user's zone).
fn dates_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// Days since 1970-01-01 as a civil date (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn status_word(s: Option<RunStatus>) -> &'static str {
    match s {
        None => "never ran",
        Some(RunStatus::Running) => "running",
        Some(RunStatus::Ok) => "ok",
        Some(RunStatus::Error) => "error",
        Some(RunStatus::Skipped) => "skipped",
    }
}

pub fn render_list(list: &CronListResult) -> String {
    if list.jobs.is_empty() {
        return "No cron jobs. Add one with `gsv cron add --in 20m \"…\"`.\n".into();
    }
    let mut out = String::new();
    for v in &list.jobs {
        let j = &v.job;
        let when = v.schedule_human.clone().unwrap_or_default();
        let next = match (j.enabled, &v.next_run_human) {
            (false, _) => "disabled".to_string(),
            (true, Some(n)) => format!("next {n}"),
            (true, None) => "no next run".to_string(),
        };
        out.push_str(&format!(
            "{}  {}  [{}] {when}; {next}; last: {}\n",
            j.id,
            j.name,
            j.agent_id,
            status_word(j.state.last_status)
        ));
    }
    if list.count as usize > list.jobs.len() {
        out.push_str(&format!("({} of {} jobs)\n", list.jobs.len(), list.count));
    }
    out
}

pub fn render_runs(r: &CronRunsResult) -> String {
    if r.runs.is_empty() {
        return "No runs yet.\n".into();
    }
    r.runs
        .iter()
        .map(|run| {
            let late = match run.late_ms {
                Some(ms) if ms >= 60_000 => format!(", {} min late", ms / 60_000),
                Some(ms) if ms >= 1000 => format!(", {} s late", ms / 1000),
                _ => String::new(),
            };
            let took = run
                .duration_ms
                .map_or(String::new(), |d| format!(", took {} ms", d));
            let detail = run
                .error
                .as_deref()
                .or(run.summary.as_deref())
                .map(|t| format!(": {}", t.lines().next().unwrap_or("")))
                .unwrap_or_default();
            format!(
                "{}  {}  {}{late}{took}{detail}\n",
                time(Some(run.ts)),
                run.job_id,
                status_word(Some(run.status)),
            )
        })
        .collect()
}

pub fn render_heartbeats(agents: &std::collections::BTreeMap<String, HeartbeatState>) -> String {
    let mut out = String::new();
    for (id, s) in agents {
        // v1 gateways do not say how often.
        let every = match s.every_ms {
            Some(0) => "off; ".to_string(),
            Some(ms) => format!("every {} min; ", ms / 60_000),
            None => String::new(),
        };
        let mut line = format!("{id}: {every}next {}", time(s.next_heartbeat_at));
        if let Some(at) = s.last_heartbeat_at {
            line.push_str(&format!("; last {}", time(Some(at))));
        }
        line.push_str(&format!("; {}", status_word(s.last_status)));
        if let Some(r) = &s.last_skip_reason {
            line.push_str(&format!(" ({r})"));
        }
        if let Some(o) = &s.last_outcome {
            line.push_str(&format!("; answer {o}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

pub async fn run(target: &GatewayTarget, command: CronCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        CronCommand::Status { json } => {
            let s = conn.call::<method::CronStatus>(&NoParams).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                let next = s.next_run_at_ms.map_or("none".into(), dates_utc);
                println!(
                    "cron {}: {} jobs ({} due, {} running), next run {next}; limits {} jobs, {} runs at once; zone {}",
                    if s.enabled { "on" } else { "off" },
                    s.count,
                    s.due_count,
                    s.running_count,
                    s.max_jobs,
                    s.max_concurrent_runs,
                    s.timezone.unwrap_or_else(|| "UTC".into())
                );
            }
        }
        CronCommand::List {
            agent,
            enabled_only,
            json,
        } => {
            let p = CronListParams {
                agent_id: agent,
                include_disabled: Some(!enabled_only),
                limit: Some(500),
                offset: None,
            };
            print_answer::<method::CronList>(&conn, &p, json, render_list).await?;
        }
        CronCommand::Add {
            text,
            schedule,
            options,
        } => {
            let Some(schedule) = schedule_value(&schedule)? else {
                bail!("say when: --in, --at, --every or --cron");
            };
            let p = CronAddParams {
                name: options.name.clone(),
                agent_id: options.agent.clone(),
                description: None,
                enabled: None,
                delete_after_run: options.delete_after_run.then_some(true),
                schedule,
                spec: spec_value(&text, &options),
            };
            let r = conn.call::<method::CronAdd>(&p).await?;
            println!("Added {} ({}).", r.job.id, r.job.name);
        }
        CronCommand::Edit {
            id,
            text,
            schedule,
            options,
            enable,
            disable,
        } => {
            let mut patch = Map::new();
            if let Some(s) = schedule_value(&schedule)? {
                patch.insert("schedule".into(), s);
            }
            if let Some(t) = &text {
                patch.insert("spec".into(), spec_value(t, &options));
            }
            if let Some(n) = &options.name {
                patch.insert("name".into(), n.clone().into());
            }
            if enable || disable {
                patch.insert("enabled".into(), enable.into());
            }
            let p = CronUpdateParams {
                id,
                patch: Value::Object(patch),
            };
            let r = conn.call::<method::CronUpdate>(&p).await?;
            println!("Updated {} ({}).", r.job.id, r.job.name);
        }
        CronCommand::Rm { id } => {
            let r = conn
                .call::<method::CronRemove>(&CronIdParams { id: id.clone() })
                .await?;
            match r.removed {
                true => println!("Removed {id}."),
                false => bail!("no cron job {id}"),
            }
        }
        CronCommand::Run { id } => {
            let p = CronRunParams {
                id: Some(id),
                mode: Some(CronRunMode::Force),
            };
            let r = conn.call::<method::CronRun>(&p).await?;
            for res in r.results {
                match res.error {
                    Some(e) => println!("{}: {} ({e})", res.job_id, status_word(res.status)),
                    None => println!("{}: started (run {})", res.job_id, res.run_id),
                }
            }
        }
        CronCommand::Runs { id, limit, json } => {
            let p = CronRunsParams {
                job_id: id,
                limit: Some(limit),
                offset: None,
            };
            let r = conn.call::<method::CronRuns>(&p).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print!("{}", render_runs(&r));
            }
        }
    }
    Ok(())
}

pub async fn heartbeat(target: &GatewayTarget, command: HeartbeatCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        HeartbeatCommand::Status { json } => {
            let r = conn.call::<method::HeartbeatStatus>(&NoParams).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                print!("{}", render_heartbeats(&r.agents));
            }
        }
        HeartbeatCommand::Trigger { agent } => {
            let p = HeartbeatTriggerParams { agent_id: agent };
            let r = conn.call::<method::HeartbeatTrigger>(&p).await?;
            println!("{}", r.message);
        }
        HeartbeatCommand::Start => {
            let r = conn.call::<method::HeartbeatStart>(&NoParams).await?;
            println!("{}", r.message);
            print!("{}", render_heartbeats(&r.agents));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "cron_tests.rs"]
mod tests;
