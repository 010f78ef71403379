//! `gsv session list|get|stats|history|preview|set`: the agent's sessions,
//! over the socket.

use super::GatewayTarget;
use crate::cli::SessionCommand;
use crate::connection::{read_answer, DEFAULT_REQUEST_TIMEOUT};
use anyhow::{bail, Result};
use gsv_protocol::method::{self, Method};
use gsv_protocol::{
    AssistantMessage, EarlyCall, Message, SessionCompactParams, SessionCompactResult,
    SessionGetParams, SessionGetResult, SessionHistoryResult, SessionPatchParams,
    SessionPreviewParams, SessionPreviewResult, SessionResetResult, SessionStatsResult,
    SessionTranscriptParams, SessionTranscriptResult, SessionsListParams, SessionsListResult,
    TokenCounts, WorkspaceLoadStats,
};
use serde_json::{json, Value};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

pub async fn run(target: &GatewayTarget, command: SessionCommand, default_key: &str) -> Result<()> {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    execute(target, command, default_key, now_ms, &mut std::io::stdout()).await
}

/// Runs one session command; `default_key` stands in for a KEY left out and
/// `now_ms` is the time `list` measures "last active" from.
pub async fn execute(
    target: &GatewayTarget,
    command: SessionCommand,
    default_key: &str,
    now_ms: i64,
    out: &mut dyn Write,
) -> Result<()> {
    let key_or_default = |key: Option<String>| key.unwrap_or_else(|| default_key.to_string());
    match command {
        SessionCommand::List { limit, offset } => {
            let conn = target.connect().await?;
            let params = SessionsListParams {
                offset,
                limit: Some(limit),
            };
            let list: SessionsListResult = conn.call::<method::SessionsList>(&params).await?;
            out.write_all(render_list(&list, now_ms).as_bytes())?;
        }
        SessionCommand::Get { key, json } => {
            let answer = fetch::<method::SessionGet>(target, key_or_default(key)).await?;
            if json {
                write_json(out, &answer)?;
            } else {
                let session: SessionGetResult = read_answer::<method::SessionGet>(answer)?;
                out.write_all(render_session(&session).as_bytes())?;
            }
        }
        SessionCommand::Stats { key, json } => {
            let answer = fetch::<method::SessionStats>(target, key_or_default(key)).await?;
            if json {
                write_json(out, &answer)?;
            } else {
                let stats: SessionStatsResult = read_answer::<method::SessionStats>(answer)?;
                out.write_all(render_stats(&stats).as_bytes())?;
            }
        }
        SessionCommand::History { key, json } => {
            let answer = fetch::<method::SessionHistory>(target, key_or_default(key)).await?;
            if json {
                write_json(out, &answer)?;
            } else {
                let history: SessionHistoryResult = read_answer::<method::SessionHistory>(answer)?;
                out.write_all(render_history(&history).as_bytes())?;
            }
        }
        SessionCommand::Preview { key, limit, json } => {
            let conn = target.connect().await?;
            let params = SessionPreviewParams {
                session_key: key_or_default(key),
                limit: Some(limit),
            };
            let answer = conn
                .call_value::<method::SessionPreview>(&params, DEFAULT_REQUEST_TIMEOUT)
                .await?;
            if json {
                write_json(out, &answer)?;
            } else {
                let preview: SessionPreviewResult = read_answer::<method::SessionPreview>(answer)?;
                out.write_all(render_preview(&preview).as_bytes())?;
            }
        }
        SessionCommand::Reset { key } => {
            let answer = fetch::<method::SessionReset>(target, key_or_default(key)).await?;
            let result: SessionResetResult = read_answer::<method::SessionReset>(answer)?;
            out.write_all(render_reset(&result).as_bytes())?;
        }
        SessionCommand::Compact { key, keep } => {
            let conn = target.connect().await?;
            let params = SessionCompactParams {
                session_key: key_or_default(key),
                keep_messages: Some(keep),
            };
            let result: SessionCompactResult = conn.call::<method::SessionCompact>(&params).await?;
            out.write_all(render_compact(&result).as_bytes())?;
        }
        SessionCommand::Transcript {
            key,
            session_id,
            offset,
            limit,
            json,
        } => {
            let conn = target.connect().await?;
            let params = SessionTranscriptParams {
                session_key: key_or_default(key),
                session_id,
                offset: Some(offset),
                limit: Some(limit),
            };
            let answer = conn
                .call_value::<method::SessionTranscript>(&params, DEFAULT_REQUEST_TIMEOUT)
                .await?;
            if json {
                write_json(out, &answer)?;
            } else {
                let t: SessionTranscriptResult = read_answer::<method::SessionTranscript>(answer)?;
                out.write_all(render_transcript(&t, offset).as_bytes())?;
            }
        }
        SessionCommand::Set { args } => {
            let (key, path, value) = match <[String; 3]>::try_from(args) {
                Ok([key, path, value]) => (key, path, value),
                Err(args) => match <[String; 2]>::try_from(args) {
                    Ok([path, value]) => (default_key.to_string(), path, value),
                    Err(_) => bail!("usage: gsv session set [KEY] PATH VALUE"),
                },
            };
            // A bad PATH or VALUE needs no gateway to be refused.
            let patch = build_patch(&key, &path, &value)?;
            let conn = target.connect().await?;
            conn.call_value::<method::SessionPatch>(&patch, DEFAULT_REQUEST_TIMEOUT)
                .await?;
            writeln!(out, "Set {path} = {value} for {key}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The answer to a method whose params are just the session key, as sent
/// (`--json` shows it whole).
async fn fetch<M: Method<Params = SessionGetParams>>(
    target: &GatewayTarget,
    session_key: String,
) -> Result<Value> {
    let conn = target.connect().await?;
    let params = SessionGetParams { session_key };
    Ok(conn
        .call_value::<M>(&params, DEFAULT_REQUEST_TIMEOUT)
        .await?)
}

fn write_json(out: &mut dyn Write, answer: &Value) -> Result<()> {
    writeln!(out, "{}", serde_json::to_string_pretty(answer)?)?;
    Ok(())
}

// ---- session set ----

/// The paths `gsv session set` knows.
pub const SET_PATHS: &[&str] = &[
    "label",
    "model",
    "model.provider",
    "model.id",
    "thinkingLevel",
    "systemPrompt",
    "maxTokens",
    "resetPolicy.mode",
    "resetPolicy.atHour",
    "resetPolicy.idleMinutes",
];

/// The `session.patch` params that set PATH to the text VALUE. `null`
/// clears; number paths take whole numbers; `model` takes `provider/id` or
/// an id alone. Setting `resetPolicy.atHour` or `resetPolicy.idleMinutes`
/// also switches the mode to `daily` or `idle`, the only mode that uses it.
pub fn build_patch(key: &str, path: &str, raw: &str) -> Result<SessionPatchParams> {
    let mut patch = SessionPatchParams {
        session_key: key.to_string(),
        settings: None,
        label: None,
        reset_policy: None,
    };
    match path {
        "label" => patch.label = Some(text(raw)),
        "model" => patch.settings = Some(json!({ "model": model(raw)? })),
        "model.provider" | "model.id" => {
            let field = &path["model.".len()..];
            let value = non_empty_text(path, raw)?;
            patch.settings = Some(json!({ "model": { field: value } }));
        }
        "thinkingLevel" | "systemPrompt" => patch.settings = Some(json!({ path: text(raw) })),
        "maxTokens" => patch.settings = Some(json!({ path: number(path, raw)? })),
        "resetPolicy.mode" => patch.reset_policy = Some(json!({ "mode": text(raw) })),
        "resetPolicy.atHour" | "resetPolicy.idleMinutes" => {
            let field = &path["resetPolicy.".len()..];
            let value = number(path, raw)?;
            let mode = if field == "atHour" { "daily" } else { "idle" };
            patch.reset_policy = Some(if value.is_null() {
                json!({ field: value })
            } else {
                json!({ "mode": mode, field: value })
            });
        }
        _ => bail!(
            "unknown session setting `{path}`; use one of: {}",
            SET_PATHS.join(", ")
        ),
    }
    Ok(patch)
}

fn text(raw: &str) -> Value {
    match raw {
        "null" => Value::Null,
        _ => Value::String(raw.to_string()),
    }
}

fn non_empty_text(path: &str, raw: &str) -> Result<Value> {
    if raw.trim().is_empty() {
        bail!("{path} cannot be empty");
    }
    Ok(text(raw))
}

fn number(path: &str, raw: &str) -> Result<Value> {
    match raw {
        "null" => Ok(Value::Null),
        _ => match raw.trim().parse::<u64>() {
            Ok(n) => Ok(json!(n)),
            Err(_) => bail!("{path} must be a whole number (or null to clear it), not `{raw}`"),
        },
    }
}

/// `provider/id` (the id may hold more slashes) or an id alone.
fn model(raw: &str) -> Result<Value> {
    if raw == "null" {
        return Ok(Value::Null);
    }
    match raw.split_once('/') {
        Some((provider, id)) if !provider.is_empty() && !id.is_empty() => {
            Ok(json!({ "provider": provider, "id": id }))
        }
        None if !raw.trim().is_empty() => Ok(json!({ "id": raw })),
        _ => bail!("model must be provider/id or an id, e.g. openai/gpt-4.1, not `{raw}`"),
    }
}

// ---- rendering ----

/// A table of key, last active and label, then `N of COUNT sessions`.
pub fn render_list(list: &SessionsListResult, now_ms: i64) -> String {
    let mut rows = vec![[
        "KEY".to_string(),
        "LAST ACTIVE".to_string(),
        "LABEL".to_string(),
    ]];
    rows.extend(list.sessions.iter().map(|s| {
        [
            s.session_key.clone(),
            ago(now_ms, s.last_active_at),
            s.label.clone().unwrap_or_default(),
        ]
    }));
    let width = |col: usize| {
        rows.iter()
            .map(|r| r[col].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (key_width, active_width) = (width(0), width(1));
    let mut out = String::new();
    if !list.sessions.is_empty() {
        for [key, active, label] in &rows {
            let line = format!("{key:<key_width$}  {active:<active_width$}  {label}");
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    let noun = if list.count == 1 {
        "session"
    } else {
        "sessions"
    };
    out.push_str(&format!(
        "{} of {} {noun}\n",
        list.sessions.len(),
        list.count
    ));
    out
}

pub fn render_session(s: &SessionGetResult) -> String {
    let mut fields = vec![("Session", s.session_key.clone())];
    if let Some(label) = &s.label {
        fields.push(("Label", label.clone()));
    }
    fields.extend([
        ("Session id", s.session_id.clone()),
        ("Created", iso_utc(s.created_at)),
        ("Updated", iso_utc(s.updated_at)),
        ("Messages", s.message_count.to_string()),
        ("Tokens", tokens(&s.tokens)),
    ]);
    if let Some(trust) = s.trust {
        fields.push(("Trust", trust_line(trust)));
    }
    let settings = &s.settings;
    if let Some(model) = &settings.model {
        let shown = match (model.provider.as_str(), model.id.as_str()) {
            ("", id) => id.to_string(),
            (provider, id) => format!("{provider}/{id}"),
        };
        fields.push(("Model", shown));
    }
    if let Some(level) = &settings.thinking_level {
        fields.push(("Thinking", level.clone()));
    }
    if let Some(max) = settings.max_tokens {
        fields.push(("Max tokens", max.to_string()));
    }
    if let Some(prompt) = &settings.system_prompt {
        fields.push(("System prompt", shorten(prompt, 60)));
    }
    fields.push((
        "Reset policy",
        s.reset_policy
            .as_ref()
            .map(reset_policy)
            .unwrap_or_else(|| "gateway default".to_string()),
    ));
    if let Some(at) = s.last_reset_at {
        fields.push(("Last reset", iso_utc(at)));
    }
    fields.push(("Previous ids", id_list(&s.previous_session_ids)));
    render_fields(&fields)
}

/// `approved (last message; gsv trust explain shows what it may do)`.
fn trust_line(trust: gsv_protocol::Trust) -> String {
    format!("{trust} (the last message's; `gsv trust explain` shows what it may do)")
}

pub fn render_stats(s: &SessionStatsResult) -> String {
    let mut fields = vec![
        ("Session", s.session_key.clone()),
        ("Session id", s.session_id.clone()),
        ("Messages", s.message_count.to_string()),
        ("Tokens", tokens(&s.tokens)),
    ];
    fields.extend(usage_fields(&s.tokens));
    if let Some(turn) = &s.last_turn {
        fields.push(("Last turn", turn_line(turn)));
    }
    fields.extend([
        ("Created", iso_utc(s.created_at)),
        ("Updated", iso_utc(s.updated_at)),
        ("Uptime", duration(s.uptime)),
        (
            "Running",
            if s.is_processing { "yes" } else { "no" }.to_string(),
        ),
        ("Queued", s.queue_size.to_string()),
    ]);
    if let Some(trust) = s.trust {
        fields.push(("Trust", trust_line(trust)));
    }
    if let Some(l) = &s.last_workspace_load {
        fields.push(("Last prompt", workspace_load(l)));
        if !l.recalled.is_empty() {
            fields.push(("Recalled", l.recalled.join("\n")));
        }
    }
    render_fields(&fields)
}

/// `0 R2 reads, 4 listings in 1 batch (10 files and 3 skills cached, 0 read)`.
fn workspace_load(l: &WorkspaceLoadStats) -> String {
    if l.early_call == Some(EarlyCall::Reused) {
        return "the previous prompt, unchanged: nothing read (checked against R2 within workspace.recheckSeconds)".into();
    }
    let mut out = if l.batches == 0 {
        // Nothing requested: the listings were another session's, taken
        // within workspace.recheckSeconds (the files from the cache).
        format!(
            "nothing requested from R2: {} files and {} skills cached, as another session listed them",
            l.files_cached, l.skills_cached
        )
    } else {
        workspace_requests(l)
    };
    match l.early_call {
        Some(EarlyCall::Kept) => out += "; the model was called alongside, prompt unchanged",
        Some(EarlyCall::Discarded) => {
            out += "; the model was called alongside and again, the prompt had changed"
        }
        Some(EarlyCall::Reused) | None => {}
    }
    out
}

/// The requests of a load that made some.
fn workspace_requests(l: &WorkspaceLoadStats) -> String {
    let mut out = format!("{} R2 reads, {} listings", l.r2_gets, l.r2_lists);
    if l.r2_puts > 0 {
        out += &format!(", {} writes", l.r2_puts);
    }
    let plural = if l.batches == 1 { "" } else { "es" };
    out += &format!(
        " in {} batch{plural} ({} files and {} skills cached, {} skills read)",
        l.batches, l.files_cached, l.skills_cached, l.skills_read
    );
    out
}

pub fn render_history(h: &SessionHistoryResult) -> String {
    render_fields(&[
        ("Session", h.session_key.clone()),
        ("Current id", h.current_session_id.clone()),
        ("Previous ids", id_list(&h.previous_session_ids)),
    ])
}

pub fn render_reset(r: &SessionResetResult) -> String {
    let archived = match &r.archived_to {
        Some(key) => format!("Archived {} messages to {key}.", r.archived_messages),
        None => "Nothing to archive.".to_string(),
    };
    format!(
        "Session reset. {archived} New session id {} (was {}).\n",
        r.new_session_id, r.old_session_id
    )
}

pub fn render_compact(r: &SessionCompactResult) -> String {
    match &r.archived_to {
        Some(key) => format!(
            "Archived {} messages to {key}; {} kept\n",
            r.trimmed_messages, r.kept_messages
        ),
        None => format!("Nothing to compact: {} messages kept\n", r.kept_messages),
    }
}

/// Like a preview: a header, then one block per archived message.
pub fn render_transcript(t: &SessionTranscriptResult, offset: u32) -> String {
    if t.messages.is_empty() {
        return format!(
            "No archived messages for session {} of {}\n",
            t.session_id, t.session_key
        );
    }
    let last = offset as usize + t.messages.len();
    let mut out = format!(
        "{} (session {}): archived messages {}–{}\n",
        t.session_key,
        t.session_id,
        offset + 1,
        last
    );
    for message in &t.messages {
        out.push('\n');
        out.push_str(&render_message(message));
    }
    if let Some(next) = t.next_offset {
        out.push_str(&format!("\n(more: --offset {next})\n"));
    }
    out
}

/// A header, then one block per message, blocks apart by a blank line.
pub fn render_preview(p: &SessionPreviewResult) -> String {
    if p.messages.is_empty() {
        return format!(
            "{} (session {}) has no messages yet\n",
            p.session_key, p.session_id
        );
    }
    let mut out = format!(
        "{} (session {}): last {} of {} messages\n",
        p.session_key,
        p.session_id,
        p.messages.len(),
        p.message_count
    );
    for message in &p.messages {
        out.push('\n');
        out.push_str(&render_message(message));
    }
    out
}

fn render_message(message: &Message) -> String {
    match message {
        Message::User(m) => format!("user: {}\n", m.content.text()),
        Message::Assistant(m) => render_assistant(m),
        Message::ToolResult(m) => {
            let error = if m.is_error { " (error)" } else { "" };
            let text = gsv_protocol::join_text(&m.content);
            format!(
                "toolResult {}{error}: {}\n",
                m.tool_name,
                shorten(&text, 200)
            )
        }
    }
}

fn render_assistant(m: &AssistantMessage) -> String {
    use gsv_protocol::StopReason;
    let failed = m.stop_reason == Some(StopReason::Error) || m.error_message.is_some();
    let mut out = String::from(if failed {
        "assistant (error):"
    } else {
        "assistant:"
    });
    let text = m.text();
    if !text.is_empty() {
        out.push(' ');
        out.push_str(&text);
    }
    out.push('\n');
    for (_, name, arguments) in m.tool_calls() {
        out.push_str(&format!(
            "→ {name}({})\n",
            shorten(&arguments.to_string(), 120)
        ));
    }
    if let Some(error) = &m.error_message {
        out.push_str(&format!("error: {error}\n"));
    }
    out
}

/// `Label  value` lines, the values lined up.
fn render_fields(fields: &[(&str, String)]) -> String {
    let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    fields
        .iter()
        .map(|(label, value)| {
            let value = value.replace('\n', &format!("\n{:width$}  ", ""));
            format!("{label:<width$}  {value}\n")
        })
        .collect()
}

fn tokens(t: &TokenCounts) -> String {
    format!("{} in, {} out, {} total", t.input, t.output, t.total)
}

/// The cache and cost lines, when there is something to say.
fn usage_fields(t: &TokenCounts) -> Vec<(&'static str, String)> {
    let mut fields = Vec::new();
    if let Some(cache) = t.cache_text() {
        fields.push(("Cache", cache));
    }
    if let Some(cost) = t.cost_text() {
        fields.push(("Cost", format!("{cost} (estimated)")));
    }
    fields
}

/// `1200 in, 300 out; cache 39000 read / 1300 written (94% of input); ~$0.0297`.
fn turn_line(t: &TokenCounts) -> String {
    let mut line = format!("{} in, {} out", t.input, t.output);
    if let Some(cache) = t.cache_text() {
        line.push_str(&format!("; cache {cache}"));
    }
    if let Some(cost) = t.cost_text() {
        line.push_str(&format!("; {cost}"));
    }
    line
}

fn id_list(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".to_string()
    } else {
        ids.join("\n")
    }
}

/// `manual`, `daily at 04:00`, `idle after 30 min`; another shape as JSON.
fn reset_policy(policy: &Value) -> String {
    match (
        policy["mode"].as_str(),
        policy["atHour"].as_u64(),
        policy["idleMinutes"].as_u64(),
    ) {
        (Some("manual"), _, _) => "manual".to_string(),
        (Some("daily"), Some(hour), _) => format!("daily at {hour:02}:00"),
        (Some("idle"), _, Some(minutes)) => format!("idle after {minutes} min"),
        (Some(mode), None, None) => mode.to_string(),
        _ => policy.to_string(),
    }
}

/// At most `max` characters, the last one `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `just now`, `3m ago`, `5h ago`, `2d ago`.
fn ago(now_ms: i64, then_ms: i64) -> String {
    let secs = (now_ms - then_ms) / 1000;
    match secs {
        s if s < 60 => "just now".to_string(),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86_400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86_400),
    }
}

/// `45s`, `3m 20s`, `2h 5m`, `3d 4h`.
fn duration(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
        s if s < 86_400 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        s => format!("{}d {}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// Milliseconds since the epoch as `2026-02-18T09:30:05Z`.
fn iso_utc(ms: i64) -> String {
    gsv_protocol::dates::iso_utc_seconds(ms)
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
