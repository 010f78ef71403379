//! Voice notes into text, once each. `transcription.provider` picks the
//! service: `openai` is any OpenAI-compatible `/audio/transcriptions`
//! endpoint (`transcription.baseUrl`, else `providers.openai.baseUrl`,
//! else OpenAI's; `transcription.apiKey`, else `apiKeys.openai`;
//! `transcription.model`, default `whisper-1`); `workers-ai` (the default)
//! is Workers AI's Whisper when the gateway has an `AI` binding, and falls
//! back to the OpenAI-compatible endpoint when it has not but a key is
//! set. Here: that choice, the request bodies and reading the answers.

use super::mime::{essence, extension};
use crate::config::Config;
use serde_json::Value;

pub const OPENAI_DEFAULT_BASE: &str = "https://api.openai.com/v1";
pub const OPENAI_DEFAULT_MODEL: &str = "whisper-1";
pub const WORKERS_AI_MODEL: &str = "@cf/openai/whisper-large-v3-turbo";

/// Where a voice note is transcribed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transcriber {
    /// `POST {url}` multipart (OpenAI's format).
    OpenAi {
        url: String,
        api_key: Option<String>,
        model: String,
    },
    /// `env.AI.run(model, {audio})`.
    WorkersAi { model: String },
}

/// The transcriber the config names, given whether the Worker has an
/// `AI` binding; else why there is none, in words for the model's note.
pub fn transcriber(config: &Config, has_ai_binding: bool) -> Result<Transcriber, String> {
    let provider = config
        .str_at("transcription.provider")
        .unwrap_or("workers-ai");
    let key = config
        .str_at("transcription.apiKey")
        .or(config.str_at("apiKeys.openai"))
        .filter(|k| !k.is_empty() && *k != crate::config::MASK)
        .map(str::to_string);
    let base = config
        .str_at("transcription.baseUrl")
        .filter(|b| !b.is_empty());
    let model = config
        .str_at("transcription.model")
        .filter(|m| !m.is_empty());
    let openai = || {
        let base = base
            .or(config.str_at("providers.openai.baseUrl"))
            .unwrap_or(OPENAI_DEFAULT_BASE)
            .trim_end_matches('/');
        Transcriber::OpenAi {
            url: format!("{base}/audio/transcriptions"),
            api_key: key.clone(),
            model: model.unwrap_or(OPENAI_DEFAULT_MODEL).to_string(),
        }
    };
    match provider {
        "openai" if key.is_none() && base.is_none() => Err(
            "transcription.provider is openai but no key is set (apiKeys.openai or \
             transcription.apiKey)"
                .into(),
        ),
        "openai" => Ok(openai()),
        _ if has_ai_binding => Ok(Transcriber::WorkersAi {
            model: model
                .filter(|m| m.starts_with("@cf/"))
                .unwrap_or(WORKERS_AI_MODEL)
                .to_string(),
        }),
        _ if key.is_some() || base.is_some() => Ok(openai()),
        _ => Err(
            "no transcription service: the gateway has no Workers AI binding (AI) and no \
             OpenAI-compatible endpoint is set (transcription.provider openai with \
             apiKeys.openai, or transcription.baseUrl)"
                .into(),
        ),
    }
}

/// The name the file is sent under: the endpoint tells formats by
/// extension (OpenAI takes flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm).
pub fn upload_name(filename: Option<&str>, mime: &str) -> String {
    let ext = match essence(mime).as_str() {
        // Opus voice notes are Ogg files.
        "audio/opus" => "ogg",
        m => extension(m),
    };
    match filename.filter(|n| n.contains('.') && !n.contains(['"', '\r', '\n'])) {
        Some(name) => name.to_string(),
        None => format!("voice.{ext}"),
    }
}

/// OpenAI's `multipart/form-data` request body (`file`, `model`,
/// `response_format=json`) and its `Content-Type`.
pub fn openai_request(
    boundary: &str,
    filename: &str,
    mime: &str,
    audio: &[u8],
    model: &str,
) -> (String, Vec<u8>) {
    let mut body = Vec::with_capacity(audio.len() + 512);
    let mut field = |name: &str, value: &str| {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    };
    field("model", model);
    field("response_format", "json");
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: {}\r\n\r\n",
            essence(mime)
        )
        .as_bytes(),
    );
    body.extend_from_slice(audio);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// The transcript from an OpenAI-compatible answer, or why not.
pub fn openai_text(status: u16, body: &str) -> Result<String, String> {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    if !(200..300).contains(&status) {
        let message = parsed
            .as_ref()
            .and_then(|v| v.pointer("/error/message").and_then(Value::as_str))
            .map(str::to_string)
            .unwrap_or_else(|| body.chars().take(200).collect());
        return Err(format!(
            "the transcription service answered {status}: {message}"
        ));
    }
    parsed
        .as_ref()
        .and_then(|v| v.get("text").and_then(Value::as_str))
        .map(|t| t.trim().to_string())
        .ok_or_else(|| "the transcription service gave no text".to_string())
}

/// The transcript from Workers AI Whisper's result (`{text, …}`, its
/// `text` as read by the shell); its input is `{audio: <base64>}`.
pub fn workers_ai_text(text: Option<String>) -> Result<String, String> {
    text.map(|t| t.trim().to_string())
        .ok_or_else(|| "Workers AI gave no text".to_string())
}
