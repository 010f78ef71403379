//! `gsv chat`: one message, or an interactive session, with replies
//! streamed as the gateway sends them.

use super::chat_render::{ReplyEnd, ReplyRenderer};
use super::GatewayTarget;
use crate::config;
use crate::connection::Connection;
use crate::markdown::{self, Mode};
use anyhow::{anyhow, Result};
use gsv_protocol::{event, method, ChatEvent, ChatSendParams, ChatSendResult, EventFrame};
use rustyline::error::ReadlineError;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::Instant;

/// Give up on a reply after this long without any event for its run.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(10 * 60);
/// Conventional exit code for "stopped by Ctrl-C".
const EXIT_INTERRUPTED: u8 = 130;
const QUIT_WORDS: &[&str] = &["/quit", "/exit", "exit", "quit"];

/// Where a reply goes; tests pass buffers.
pub struct Terminal<O: Write, E: Write> {
    pub out: O,
    pub err: E,
    /// How the agent's markdown is shown (`Mode::detect`).
    pub markdown: Mode,
}

impl Terminal<std::io::Stdout, std::io::Stderr> {
    fn std(markdown: Mode) -> Self {
        Terminal {
            out: std::io::stdout(),
            err: std::io::stderr(),
            markdown,
        }
    }
}

pub async fn run(
    target: &GatewayTarget,
    session_key: &str,
    message: Option<String>,
    attach: &[std::path::PathBuf],
    markdown: Mode,
) -> Result<ExitCode> {
    match (message, attach.is_empty()) {
        (Some(message), _) => one_shot(target, session_key, &message, attach, markdown).await,
        // Files alone are a message too.
        (None, false) => one_shot(target, session_key, "", attach, markdown).await,
        (None, true) => repl(target, session_key, markdown).await,
    }
}

async fn one_shot(
    target: &GatewayTarget,
    session_key: &str,
    message: &str,
    attach: &[std::path::PathBuf],
    markdown: Mode,
) -> Result<ExitCode> {
    // The files first (each straight into the session's media in R2), so
    // a file the gateway refuses stops the message before it is sent.
    let mut media = Vec::with_capacity(attach.len());
    for file in attach {
        let stored = crate::upload::upload(&target.url, target.token.as_deref(), session_key, file)
            .await
            .map_err(|e| anyhow!(e))?;
        media.push(stored);
    }
    let conn = target.connect().await?;
    let mut term = Terminal::std(markdown);
    tokio::select! {
        result = send_with_media(&conn, session_key, message, media, &mut term, SILENCE_LIMIT) => {
            result.map(|()| ExitCode::SUCCESS).map_err(|e| anyhow!(e))
        }
        _ = tokio::signal::ctrl_c() => {
            reset_style(markdown);
            eprintln!("\ninterrupted (the agent may still be working; send /stop to cancel the run)");
            Ok(ExitCode::from(EXIT_INTERRUPTED))
        }
    }
}

async fn repl(target: &GatewayTarget, session_key: &str, markdown: Mode) -> Result<ExitCode> {
    // Fail fast when the first connection fails: the settings are likely wrong.
    let mut conn = Some(target.connect().await?);
    let version = conn
        .as_ref()
        .and_then(|c| c.hello())
        .map(|h| h.server.version.clone());
    eprintln!(
        "Connected to {} (gateway {}, session {session_key}).\n\
         Type a message and press Enter. /quit, exit or Ctrl-D leaves; Ctrl-C stops waiting \
         for a reply.\n/stop cancels a running reply; /help lists the other commands.",
        target.url,
        version.unwrap_or_default()
    );
    let mut editor = rustyline::DefaultEditor::new()?;
    let history = history_path();
    let _ = editor.load_history(&history); // none yet is fine

    loop {
        let line = match tokio::task::block_in_place(|| editor.readline("you> ")) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue, // Ctrl-C at the prompt clears the line
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if QUIT_WORDS.contains(&text) {
            break;
        }
        let _ = editor.add_history_entry(text);
        if let Err(e) = editor.append_history(&history) {
            eprintln!("warning: cannot save history to {}: {e}", history.display());
        }

        let mut term = Terminal::std(markdown);
        let turn = async {
            let conn = reconnect_if_closed(&mut conn, target).await?;
            send_and_stream(conn, session_key, text, &mut term, SILENCE_LIMIT).await
        };
        tokio::select! {
            result = turn => if let Err(e) = result { eprintln!("error: {e}") },
            _ = tokio::signal::ctrl_c() => {
                reset_style(markdown);
                eprintln!(
                    "\n(stopped waiting for this reply; the agent may still be working. \
                     Send /stop to cancel it.)"
                )
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A reply cut off mid-line may have left a style on: turn it off.
fn reset_style(markdown: Mode) {
    if markdown == Mode::Ansi {
        print!("\x1b[0m");
        let _ = std::io::stdout().flush();
    }
}

/// The REPL keeps one connection; if the gateway went away, dial again.
async fn reconnect_if_closed<'a>(
    conn: &'a mut Option<Connection>,
    target: &GatewayTarget,
) -> Result<&'a Connection, String> {
    if let Some(close) = conn.as_ref().and_then(Connection::close_reason) {
        eprintln!("({close}; reconnecting to {})", target.url);
        *conn = None;
    }
    let connection = match conn.take() {
        Some(connection) => connection,
        None => target.connect().await.map_err(|e| e.to_string())?,
    };
    Ok(conn.insert(connection))
}

fn history_path() -> std::path::PathBuf {
    let dir = config::config_dir();
    let path = dir.join("history");
    // The history may hold things typed in confidence: keep it private.
    if !path.exists() && config::write_private_file(&path, b"").is_err() {
        eprintln!("warning: cannot create {}", path.display());
    }
    path
}

/// Sends one message and prints the reply as it streams. `Err` holds the
/// message to show the user.
pub async fn send_and_stream<O: Write, E: Write>(
    conn: &Connection,
    session_key: &str,
    message: &str,
    term: &mut Terminal<O, E>,
    silence_limit: Duration,
) -> Result<(), String> {
    send_with_media(conn, session_key, message, Vec::new(), term, silence_limit).await
}

/// [`send_and_stream`] with files already uploaded (`crate::upload`).
pub async fn send_with_media<O: Write, E: Write>(
    conn: &Connection,
    session_key: &str,
    message: &str,
    media: Vec<gsv_protocol::channels::ChannelMedia>,
    term: &mut Terminal<O, E>,
    silence_limit: Duration,
) -> Result<(), String> {
    // Subscribe first: the first deltas may beat the chat.send answer.
    let mut events = conn.events();
    let params = ChatSendParams {
        session_key: session_key.to_string(),
        message: message.to_string(),
        run_id: Some(uuid::Uuid::new_v4().to_string()),
        media,
    };
    let answer = conn
        .call::<method::ChatSend>(&params)
        .await
        .map_err(|e| e.to_string())?;

    let (run_id, queue_position) = match answer {
        ChatSendResult::Started(s) => (s.run_id, s.queued.then_some(s.queue_position)),
        // `/new TEXT` answers and starts a run with TEXT in the new session.
        ChatSendResult::Command(c) if c.run_id.is_some() => {
            print_immediate_answer(c.response.as_deref(), c.error.as_deref(), term)?;
            (c.run_id.unwrap_or_default(), None)
        }
        // Slash commands (/status, /new…) and directive-only messages answer at once.
        ChatSendResult::Command(c) => {
            return print_immediate_answer(c.response.as_deref(), c.error.as_deref(), term)
        }
        ChatSendResult::DirectiveOnly(d) => {
            return print_immediate_answer(d.response.as_deref(), None, term)
        }
    };
    if let Some(position) = queue_position {
        let position = position.map(|p| format!(" (position {p})"));
        let _ = writeln!(
            term.err,
            "(queued behind a run in progress{})",
            position.unwrap_or_default()
        );
    }

    let mut renderer = ReplyRenderer::new(run_id, term.markdown);
    let result = stream_reply(conn, &mut events, &mut renderer, term, silence_limit).await;
    if result.is_err() {
        let _ = term.out.write_all(renderer.abandon().as_bytes());
        let _ = term.out.flush();
    }
    result
}

/// Prints the run's events until it ends, the socket closes or it goes quiet.
async fn stream_reply<O: Write, E: Write>(
    conn: &Connection,
    events: &mut broadcast::Receiver<EventFrame>,
    renderer: &mut ReplyRenderer,
    term: &mut Terminal<O, E>,
    silence_limit: Duration,
) -> Result<(), String> {
    let mut deadline = Instant::now() + silence_limit;
    loop {
        let frame = tokio::select! {
            biased; // drain queued events before noticing a close
            received = events.recv() => received,
            close = conn.closed() => return Err(format!("{close} while waiting for the reply")),
            _ = tokio::time::sleep_until(deadline) => return Err(format!(
                "no reply from the agent for {}; stopped waiting (it may still be working)",
                human_duration(silence_limit)
            )),
        };
        let frame = match frame {
            Ok(frame) => frame,
            Err(RecvError::Lagged(missed)) => {
                let _ = writeln!(
                    term.err,
                    "(missed {missed} events; the reply may be incomplete)"
                );
                continue;
            }
            Err(RecvError::Closed) => return Err("the connection closed".into()),
        };
        if frame.event != event::CHAT {
            continue;
        }
        // States this version does not know are skipped, as v1 clients do.
        let Some(chat) = frame
            .payload
            .and_then(|p| serde_json::from_value::<ChatEvent>(p).ok())
        else {
            continue;
        };
        let Some(rendered) = renderer.handle(&chat) else {
            continue;
        };
        deadline = Instant::now() + silence_limit;
        let _ = term.out.write_all(rendered.stdout.as_bytes());
        let _ = term.out.flush();
        let _ = term.err.write_all(rendered.stderr.as_bytes());
        match rendered.end {
            None => {}
            Some(ReplyEnd::Done) => return Ok(()),
            Some(ReplyEnd::Failed(error)) => return Err(error),
        }
    }
}

fn human_duration(d: Duration) -> String {
    match d.as_secs() {
        0 => format!("{} ms", d.as_millis()),
        s if s % 60 == 0 => format!("{} minutes", s / 60),
        s => format!("{s} s"),
    }
}

/// Shows a `chat.send` answered without a run (`/status`, `/help`…; markdown
/// like a reply); its error is the result.
fn print_immediate_answer<O: Write, E: Write>(
    response: Option<&str>,
    error: Option<&str>,
    term: &mut Terminal<O, E>,
) -> Result<(), String> {
    if let Some(response) = response.filter(|r| !r.is_empty()) {
        let shown = markdown::render(term.markdown, response.trim_end());
        let _ = writeln!(term.out, "{shown}");
        let _ = term.out.flush();
    }
    match error {
        Some(error) if !error.is_empty() => Err(error.to_string()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{accept_connect, next_request, send, FakeGateway};
    use gsv_protocol::Frame;
    use serde_json::{json, Value};

    async fn chat_against(
        gateway: &FakeGateway,
        message: &str,
    ) -> (String, String, Result<(), String>) {
        chat_shown_as(gateway, message, Mode::Raw).await
    }

    async fn chat_shown_as(
        gateway: &FakeGateway,
        message: &str,
        markdown: Mode,
    ) -> (String, String, Result<(), String>) {
        let conn = Connection::connect(&gateway.url, None).await.unwrap();
        let mut term = Terminal {
            out: Vec::new(),
            err: Vec::new(),
            markdown,
        };
        let result = send_and_stream(
            &conn,
            "agent:main:cli:dm:main",
            message,
            &mut term,
            Duration::from_secs(5),
        )
        .await;
        (
            String::from_utf8(term.out).unwrap(),
            String::from_utf8(term.err).unwrap(),
            result,
        )
    }

    fn chat_event(payload: Value) -> Frame {
        Frame::event("chat", payload)
    }

    #[tokio::test]
    async fn streams_a_reply_matched_by_run_id() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            assert_eq!(req.method, "chat.send");
            let params = req.params.unwrap();
            let run = params["runId"].as_str().unwrap().to_string();
            assert_eq!(
                params,
                json!({"sessionKey":"agent:main:cli:dm:main","message":"hi","runId":run})
            );
            // A delta before the answer must not be lost.
            send(&mut ws, chat_event(json!({"runId":run,"sessionKey":"agent:main:main","state":"delta","delta":"Hel"}))).await;
            send(&mut ws, Frame::ok(req.id, json!({"status":"started","runId":run,"sessionKey":"agent:main:main","queued":false}))).await;
            send(&mut ws, chat_event(json!({"runId":"other","sessionKey":"agent:main:main","state":"final",
                "message":{"content":[{"type":"text","text":"not ours"}],"timestamp":1}}))).await;
            send(&mut ws, chat_event(json!({"runId":run,"sessionKey":"agent:main:main","state":"future-state"}))).await;
            send(&mut ws, chat_event(json!({"runId":run,"sessionKey":"agent:main:main","state":"delta","delta":"lo"}))).await;
            send(&mut ws, chat_event(json!({"runId":run,"sessionKey":"agent:main:main","state":"final",
                "message":{"content":[{"type":"text","text":"Hello"}],"timestamp":2}}))).await;
            let _ = next_request(&mut ws).await; // hold the socket open
        })
        .await;
        assert_eq!(
            chat_against(&gateway, "hi").await,
            ("Hello\n".into(), "".into(), Ok(()))
        );
    }

    #[tokio::test]
    async fn slash_command_answer_is_printed() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            send(&mut ws, Frame::ok(req.id, json!({"status":"command","command":"status","response":"Session: agent:main:main"}))).await;
            let _ = next_request(&mut ws).await;
        })
        .await;
        assert_eq!(
            chat_against(&gateway, "/status").await,
            ("Session: agent:main:main\n".into(), "".into(), Ok(()))
        );
    }

    #[tokio::test]
    async fn styled_answers_and_replies_are_rendered() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            send(
                &mut ws,
                Frame::ok(
                    req.id,
                    json!({"status":"command","command":"status",
                "response":"**Session Status**\n• Session: `agent:main:main`\n"}),
                ),
            )
            .await;
            let req = next_request(&mut ws).await;
            let run = req.params.unwrap()["runId"].as_str().unwrap().to_string();
            send(
                &mut ws,
                Frame::ok(
                    req.id,
                    json!({"status":"started","runId":run,"sessionKey":"s","queued":false}),
                ),
            )
            .await;
            for piece in ["# Hi\nSome **bo", "ld** `co", "de`\n```sh\nls **", "*\n```"] {
                send(
                    &mut ws,
                    chat_event(json!({"runId":run,"sessionKey":"s","state":"delta","delta":piece})),
                )
                .await;
            }
            send(
                &mut ws,
                chat_event(json!({"runId":run,"sessionKey":"s","state":"final",
                "message":{"content":[{"type":"text","text":"(the whole text)"}],"timestamp":2}})),
            )
            .await;
            let _ = next_request(&mut ws).await;
        })
        .await;
        let conn = Connection::connect(&gateway.url, None).await.unwrap();
        let mut term = Terminal {
            out: Vec::new(),
            err: Vec::new(),
            markdown: Mode::Tags,
        };
        let timeout = Duration::from_secs(5);
        let status = send_and_stream(&conn, "s", "/status", &mut term, timeout).await;
        let reply = send_and_stream(&conn, "s", "hi", &mut term, timeout).await;
        assert_eq!(
            (String::from_utf8(term.out).unwrap(), status, reply),
            (
                "<b>Session Status</b>\n• Session: <code>agent:main:main</code>\n\
                 <h1>Hi</h1>\nSome <b>bold</b> <code>code</code>\n\
                 <fence>```sh</fence>\n<pre>ls ***</pre>\n<fence>```</fence>\n"
                    .into(),
                Ok(()),
                Ok(())
            )
        );
    }

    #[tokio::test]
    async fn new_with_text_prints_the_reset_then_streams_the_run() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            let run = req.params.unwrap()["runId"].as_str().unwrap().to_string();
            send(
                &mut ws,
                Frame::ok(
                    req.id,
                    json!({"status":"command","command":"reset","sessionKey":"s",
                "response":"Session reset. Archived 4 messages.","runId":run}),
                ),
            )
            .await;
            send(
                &mut ws,
                chat_event(json!({"runId":run,"sessionKey":"s","state":"final",
                "message":{"content":[{"type":"text","text":"Fresh start"}],"timestamp":2}})),
            )
            .await;
            let _ = next_request(&mut ws).await;
        })
        .await;
        assert_eq!(
            chat_against(&gateway, "/new hello").await,
            (
                "Session reset. Archived 4 messages.\nFresh start\n".into(),
                "".into(),
                Ok(())
            )
        );
    }

    #[tokio::test]
    async fn queued_run_error_and_notice() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            let run = req.params.unwrap()["runId"].as_str().unwrap().to_string();
            send(&mut ws, Frame::ok(req.id, json!({"status":"started","runId":run,"sessionKey":"s","queued":true,"queuePosition":1}))).await;
            send(&mut ws, chat_event(json!({"runId":run,"sessionKey":"s","state":"error","error":"No API key for anthropic"}))).await;
            let _ = next_request(&mut ws).await;
        })
        .await;
        assert_eq!(
            chat_against(&gateway, "hi").await,
            (
                "".into(),
                "(queued behind a run in progress (position 1))\n".into(),
                Err("No API key for anthropic".into())
            )
        );
    }

    #[tokio::test]
    async fn socket_closing_mid_reply_is_an_error() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            let run = req.params.unwrap()["runId"].as_str().unwrap().to_string();
            send(
                &mut ws,
                Frame::ok(
                    req.id,
                    json!({"status":"started","runId":run,"sessionKey":"s","queued":false}),
                ),
            )
            .await;
            send(
                &mut ws,
                chat_event(json!({"runId":run,"sessionKey":"s","state":"delta","delta":"Hal"})),
            )
            .await;
            crate::test_support::close(&mut ws, 1001, "going away").await;
        })
        .await;
        assert_eq!(
            chat_against(&gateway, "hi").await,
            (
                "Hal\n".into(),
                "".into(),
                Err("the gateway closed the connection (code 1001: going away) while waiting for the reply".into())
            )
        );
    }

    #[tokio::test]
    async fn silence_gives_up() {
        let gateway = FakeGateway::start(|mut ws| async move {
            accept_connect(&mut ws).await;
            let req = next_request(&mut ws).await;
            send(
                &mut ws,
                Frame::ok(
                    req.id,
                    json!({"status":"started","runId":"r","sessionKey":"s","queued":false}),
                ),
            )
            .await;
            let _ = next_request(&mut ws).await;
        })
        .await;
        let conn = Connection::connect(&gateway.url, None).await.unwrap();
        let mut term = Terminal {
            out: Vec::new(),
            err: Vec::new(),
            markdown: Mode::Raw,
        };
        let result = send_and_stream(&conn, "s", "hi", &mut term, Duration::from_millis(200)).await;
        assert_eq!(
            result,
            Err(
                "no reply from the agent for 200 ms; stopped waiting (it may still be working)"
                    .into()
            )
        );
    }

    #[test]
    fn durations_read_naturally() {
        let shown: Vec<String> = [
            SILENCE_LIMIT,
            Duration::from_secs(90),
            Duration::from_millis(200),
        ]
        .into_iter()
        .map(human_duration)
        .collect();
        assert_eq!(shown, vec!["10 minutes", "90 s", "200 ms"]);
    }
}
