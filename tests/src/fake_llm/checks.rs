//! What the fake checks in a request, with the real APIs' error bodies, so a
//! malformed history fails here as it would in production.

use serde_json::{json, Value};
use std::borrow::Cow;

use super::view::{chars, is_string, is_true, u64_of, Body, Fields, Message};
use super::Api;

/// A rejected request: status and the provider-shaped JSON body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    pub status: u16,
    pub body: Value,
}

/// The provider's error body for `status`, with its usual wording.
pub(crate) fn error_body(api: Api, status: u16, message: Option<&str>) -> Value {
    match api {
        Api::OpenAi | Api::Responses => {
            let (kind, code, default) = match status {
                400 => ("invalid_request_error", Value::Null, "Invalid request."),
                401 => (
                    "invalid_request_error",
                    json!("invalid_api_key"),
                    "Incorrect API key provided.",
                ),
                404 => (
                    "invalid_request_error",
                    json!("model_not_found"),
                    "The model does not exist.",
                ),
                429 => (
                    "requests",
                    json!("rate_limit_exceeded"),
                    "Rate limit reached for requests",
                ),
                503 => (
                    "server_error",
                    Value::Null,
                    "The engine is currently overloaded, please try again later",
                ),
                s if s >= 500 => (
                    "server_error",
                    Value::Null,
                    "The server had an error while processing your request. Sorry about that!",
                ),
                _ => ("invalid_request_error", Value::Null, "Request failed."),
            };
            json!({"error": {"message": message.unwrap_or(default), "type": kind, "param": null, "code": code}})
        }
        Api::Anthropic => {
            let (kind, default) = match status {
                400 => ("invalid_request_error", "Invalid request."),
                401 => ("authentication_error", "invalid x-api-key"),
                403 => (
                    "permission_error",
                    "Your API key does not have permission to use the specified resource.",
                ),
                404 => ("not_found_error", "Not found"),
                413 => (
                    "request_too_large",
                    "Request exceeds the maximum allowed number of bytes.",
                ),
                429 => (
                    "rate_limit_error",
                    "Number of request tokens has exceeded your per-minute rate limit",
                ),
                529 => ("overloaded_error", "Overloaded"),
                _ => ("api_error", "Internal server error"),
            };
            json!({"type": "error", "error": {"type": kind, "message": message.unwrap_or(default)},
                "request_id": "req_fake000000000000000000"})
        }
        Api::WorkersAi => super::workers_ai::error_body(status, message),
    }
}

/// The 400 each API answers when the prompt exceeds the context window.
pub(crate) fn context_overflow_body(api: Api) -> Value {
    match api {
        Api::OpenAi => json!({"error": {
            "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        Api::Anthropic => error_body(
            api,
            400,
            Some("prompt is too long: 210000 tokens > 200000 maximum"),
        ),
        Api::WorkersAi => error_body(api, 413, None),
        Api::Responses => super::responses::context_overflow_body(),
    }
}

/// Checks the key (`None` expected = any key, even none).
pub(crate) fn check_key(
    api: Api,
    presented: Option<&str>,
    expected: Option<&str>,
) -> Result<(), Rejection> {
    match (expected, presented) {
        (None, _) => Ok(()),
        (Some(want), Some(got)) if want == got => Ok(()),
        (Some(_), got) => {
            let message = match (api, got) {
                (Api::OpenAi | Api::Responses, None) => "You didn't provide an API key. You need to provide your API key in an \
                    Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
                    .to_string(),
                (Api::OpenAi | Api::Responses, Some(got)) => format!(
                    "Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.",
                    redact(got)
                ),
                (Api::Anthropic, None) => "x-api-key header is required".to_string(),
                (Api::Anthropic, Some(_)) => "invalid x-api-key".to_string(),
                (Api::WorkersAi, _) => "Authentication error".to_string(),
            };
            let mut body = error_body(api, 401, Some(&message));
            if matches!(api, Api::OpenAi | Api::Responses) && got.is_none() {
                body["error"]["code"] = Value::Null;
            }
            Err(Rejection { status: 401, body })
        }
    }
}

fn redact(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "*".repeat(chars.len());
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}{}{tail}", "*".repeat(chars.len() - 7))
}

fn invalid(api: Api, message: String) -> Rejection {
    Rejection {
        status: 400,
        body: error_body(api, 400, Some(&message)),
    }
}

/// The shape checks the real APIs make that a gateway bug could trip.
pub(crate) fn check_body(api: Api, body: &Body) -> Result<(), Rejection> {
    match api {
        Api::OpenAi | Api::WorkersAi => check_openai(body).map_err(|m| invalid(api, m)),
        Api::Anthropic => check_anthropic(body).map_err(|m| invalid(api, m)),
        // Its input is items, not `messages`: it checks their images itself.
        Api::Responses => return super::responses::check(body),
    }?;
    check_images(api, body).map_err(|m| invalid(api, m))
}

/// The image formats both APIs take.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The format the bytes are, as the APIs detect it.
fn sniffed(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(b"GIF8") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Images in user messages: Anthropic's `image` blocks (base64 source,
/// a type it takes that matches the bytes, at most 5 MB) and OpenAI's
/// `image_url` parts (a data URL of an image type, or an http(s) URL, at
/// most 20 MB).
fn check_images(api: Api, body: &Body) -> Result<(), String> {
    use base64::Engine;
    let decode = |data: &str| base64::engine::general_purpose::STANDARD.decode(data);
    for (i, m) in messages_of(body)?.iter().enumerate() {
        for (j, b) in blocks(m).iter().enumerate() {
            match (api, b.str("type").as_deref()) {
                (Api::Anthropic, Some("image")) => {
                    let at = format!("messages.{i}.content.{j}.image.source");
                    let source = b.object("source");
                    if source.str("type").as_deref() != Some("base64") {
                        return Err(format!("{at}.type: the fake takes base64 sources only"));
                    }
                    let media_type = source.str("media_type").unwrap_or_default();
                    if !IMAGE_TYPES.contains(&&*media_type) {
                        return Err(format!("{at}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"));
                    }
                    let bytes = decode(&source.str("data").unwrap_or_default())
                        .map_err(|_| format!("{at}.base64: invalid base64 data"))?;
                    if bytes.len() > 5 * 1024 * 1024 {
                        return Err(format!(
                            "{at}.base64: image exceeds 5 MB maximum: {} bytes > 5242880 bytes",
                            bytes.len()
                        ));
                    }
                    if sniffed(&bytes) != Some(&*media_type) {
                        return Err(format!("{at}.base64.data: Image does not match the provided media type {media_type}"));
                    }
                }
                (Api::OpenAi | Api::WorkersAi, Some("image_url")) => {
                    let url = b.object("image_url").str("url").unwrap_or_default();
                    if url.starts_with("https://") || url.starts_with("http://") {
                        continue;
                    }
                    let Some((head, data)) =
                        url.strip_prefix("data:").and_then(|u| u.split_once(','))
                    else {
                        return Err(format!("Invalid image_url in messages[{i}].content[{j}]: expected a URL or a data URL"));
                    };
                    let mime = head.strip_suffix(";base64").unwrap_or_default();
                    if !IMAGE_TYPES.contains(&mime) {
                        return Err(format!("Invalid MIME type {head:?} in messages[{i}].content[{j}]: the image must be png, jpeg, gif or webp, base64-encoded"));
                    }
                    let bytes = decode(data).map_err(|_| {
                        format!("Invalid base64 image_url in messages[{i}].content[{j}]")
                    })?;
                    if bytes.len() > 20 * 1024 * 1024 {
                        return Err(format!(
                            "Image in messages[{i}].content[{j}] is larger than 20 MB"
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn messages_of<'b, 'a>(body: &'b Body<'a>) -> Result<&'b [Message<'a>], String> {
    match body.messages.as_deref() {
        Some(m) if !m.is_empty() => Ok(m),
        Some(_) => Err("messages: at least one message is required".into()),
        None => Err("messages: Field required".into()),
    }
}

fn ids<'a: 'b, 'b>(items: impl Iterator<Item = &'b Fields<'a>>, key: &str) -> Vec<String> {
    items.filter_map(|i| i.str(key)).map(String::from).collect()
}

fn check_openai(body: &Body) -> Result<(), String> {
    if !is_string(body.fields.get("model")) {
        return Err("you must provide a model parameter".into());
    }
    if !is_true(body.fields.get("stream")) {
        return Err("the fake LLM only streams: set \"stream\": true".into());
    }
    let messages = messages_of(body)?;
    let mut open: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.str("role").as_deref() == Some("tool") {
            let id = m.str("tool_call_id").unwrap_or_default();
            if !open.iter().any(|o| *o == id) {
                return Err("Invalid parameter: messages with role 'tool' must be a response to a preceeding \
                            message with 'tool_calls'."
                    .into());
            }
            open.retain(|o| *o != id);
            continue;
        }
        if !open.is_empty() {
            return Err(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each \
                 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                open.join(", ")
            ));
        }
        let calls = m.list("tool_calls").unwrap_or_default();
        for (j, call) in calls.iter().enumerate() {
            if !is_string(call.object("function").get("arguments")) {
                return Err(format!(
                    "Invalid type for 'messages[{i}].tool_calls[{j}].function.arguments': expected a string."
                ));
            }
        }
        open = ids(calls.iter(), "id");
    }
    if !open.is_empty() {
        return Err(format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each \
             'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            open.join(", ")
        ));
    }
    Ok(())
}

/// A message's content blocks (none when its content is a string).
fn blocks<'a>(m: &Message<'a>) -> Vec<Fields<'a>> {
    m.list("content").unwrap_or_default()
}

fn of_type<'a, 'b>(
    blocks: &'b [Fields<'a>],
    kind: &'b str,
) -> impl Iterator<Item = &'b Fields<'a>> + 'b {
    blocks
        .iter()
        .filter(move |b| b.str("type").as_deref() == Some(kind))
}

fn check_anthropic(body: &Body) -> Result<(), String> {
    let fields = &body.fields;
    if !is_string(fields.get("model")) {
        return Err("model: Field required".into());
    }
    let Some(max_tokens) = u64_of(fields.get("max_tokens")) else {
        return Err("max_tokens: Field required".into());
    };
    if !is_true(fields.get("stream")) {
        return Err("the fake LLM only streams: set \"stream\": true".into());
    }
    if let Some(budget) = u64_of(fields.object("thinking").get("budget_tokens")) {
        if budget < 1024 {
            return Err(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                    .into(),
            );
        }
        if max_tokens <= budget {
            return Err("`max_tokens` must be greater than `thinking.budget_tokens`".into());
        }
    }
    let messages = messages_of(body)?;
    let contents: Vec<Vec<Fields>> = messages.iter().map(blocks).collect();
    for (i, m) in messages.iter().enumerate() {
        let content = &contents[i];
        if m.str("content").is_some_and(|c| c.is_empty())
            || of_type(content, "text").any(|b| b.str("text").is_some_and(|t| t.is_empty()))
        {
            return Err("messages: text content blocks must be non-empty".into());
        }
        let content_is_a_list = m.get("content").is_some_and(|c| c.get().starts_with('['));
        if content_is_a_list && content.is_empty() {
            return Err(format!(
                "messages.{i}: all messages must have non-empty content"
            ));
        }
        let uses = ids(of_type(content, "tool_use"), "id");
        if let Some(bad) = uses.iter().find(|id| {
            id.is_empty()
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }) {
            return Err(format!("messages.{i}.content: tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$' (got {bad:?})"));
        }
        let previous_uses = match i.checked_sub(1) {
            Some(p) if messages[p].str("role").as_deref() == Some("assistant") => {
                ids(of_type(&contents[p], "tool_use"), "id")
            }
            _ => Vec::new(),
        };
        for id in ids(of_type(content, "tool_result"), "tool_use_id") {
            if !previous_uses.contains(&id) {
                return Err(format!(
                    "messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each \
                     `tool_result` block must have a corresponding `tool_use` block in the previous message."
                ));
            }
        }
        if !uses.is_empty() {
            let answered = contents
                .get(i + 1)
                .map(|n| ids(of_type(n, "tool_result"), "tool_use_id"));
            let missing: Vec<&str> = uses
                .iter()
                .filter(|u| !answered.as_ref().is_some_and(|a| a.contains(u)))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. \
                     Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    missing.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The text of the last user-authored message (tool results are not), which
/// scripts match their trigger against.
pub(crate) fn last_user_text(api: Api, body: &Body) -> String {
    if api == Api::Responses {
        return super::responses::last_user_text(body);
    }
    body.messages
        .as_deref()
        .unwrap_or_default()
        .iter()
        .rev()
        .filter(|m| m.str("role").as_deref() == Some("user"))
        .find_map(|m| {
            if let Some(text) = m.str("content") {
                return Some(text.into_owned());
            }
            let blocks = blocks(m);
            let texts: Vec<Cow<str>> = of_type(&blocks, "text")
                .filter_map(|b| b.str("text"))
                .collect();
            let only_tool_results = api == Api::Anthropic && texts.is_empty();
            (!only_tool_results && !texts.is_empty()).then(|| texts.join("\n"))
        })
        .unwrap_or_default()
}

/// A rough token count: four characters a token.
pub(crate) fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4).max(1)
}

/// Characters of what the model reads: system prompt, messages and tools
/// (the Responses API's `instructions` and `input`), as the JSON was
/// written (the gateway writes it compact).
pub(crate) fn prompt_chars(body: &Body) -> usize {
    ["system", "messages", "instructions", "input", "tools"]
        .iter()
        .filter_map(|k| body.fields.get(k))
        .map(chars)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fake_llm::view::on;

    fn check_openai(body: &Value) -> Result<(), String> {
        on(body, super::check_openai)
    }

    fn check_anthropic(body: &Value) -> Result<(), String> {
        on(body, super::check_anthropic)
    }

    fn check_images(api: Api, body: &Value) -> Result<(), String> {
        on(body, |b| super::check_images(api, b))
    }

    fn last_user_text(api: Api, body: &Value) -> String {
        on(body, |b| super::last_user_text(api, b))
    }

    fn prompt_chars(body: &Value) -> usize {
        on(body, super::prompt_chars)
    }

    #[test]
    fn prompt_chars_counts_the_characters_of_the_json_written() {
        let body = json!({"model": "m", "system": "Sé brève — 🦀",
            "messages": [{"role": "user", "content": "naïve \"quoted\"\n"}], "tools": []});
        let written: usize = ["system", "messages", "tools"]
            .iter()
            .map(|k| body[*k].to_string().chars().count())
            .sum();
        assert_eq!((prompt_chars(&body), written), (64, 64));
    }

    #[test]
    fn wrong_and_missing_keys() {
        assert_eq!(check_key(Api::OpenAi, Some("k"), Some("k")), Ok(()));
        assert_eq!(check_key(Api::OpenAi, None, None), Ok(()));
        assert_eq!(
            check_key(Api::OpenAi, Some("sk-wrong-key-123"), Some("k")),
            Err(Rejection {
                status: 401,
                body: json!({"error": {"message": "Incorrect API key provided: sk-*********-123. You can find your API key at https://platform.openai.com/account/api-keys.",
                    "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
            })
        );
        assert_eq!(
            check_key(Api::Anthropic, None, Some("k")),
            Err(Rejection {
                status: 401,
                body: json!({"type": "error", "error": {"type": "authentication_error", "message": "x-api-key header is required"},
                    "request_id": "req_fake000000000000000000"}),
            })
        );
    }

    #[test]
    fn openai_tool_pairing_is_enforced() {
        let base = |messages: Value| json!({"model": "m", "stream": true, "messages": messages});
        let call = json!({"role":"assistant","content":null,"tool_calls":[
            {"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]});
        assert_eq!(
            check_openai(&base(
                json!([{"role":"user","content":"hi"}, call, {"role":"tool","tool_call_id":"c1","content":"ok"}])
            )),
            Ok(())
        );
        assert_eq!(
            check_openai(&base(json!([{"role":"user","content":"hi"}, call]))),
            Err("An assistant message with 'tool_calls' must be followed by tool messages responding to each \
                 'tool_call_id'. The following tool_call_ids did not have response messages: c1"
                .into())
        );
        assert_eq!(
            check_openai(&base(json!([{"role":"user","content":"hi"}, {"role":"tool","tool_call_id":"zz","content":"ok"}]))),
            Err("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into())
        );
        assert_eq!(
            check_openai(&json!({"model": "m", "stream": true, "messages": []})),
            Err("messages: at least one message is required".into())
        );
    }

    #[test]
    fn anthropic_tool_pairing_thinking_and_limits_are_enforced() {
        let base = |messages: Value| json!({"model": "m", "max_tokens": 100, "stream": true, "messages": messages});
        let use_block = json!({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]});
        let result = json!({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"ok"}]}]});
        assert_eq!(
            check_anthropic(&base(
                json!([{"role":"user","content":"hi"}, use_block, result])
            )),
            Ok(())
        );
        assert_eq!(
            check_anthropic(&base(json!([{"role":"user","content":"hi"}, use_block, {"role":"user","content":"next"}]))),
            Err("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: t1. Each \
                 `tool_use` block must have a corresponding `tool_result` block in the next message."
                .into())
        );
        assert_eq!(
            check_anthropic(&base(json!([{"role":"user","content":"hi"}, result]))),
            Err("messages.1.content: unexpected `tool_use_id` found in `tool_result` blocks: t1. Each `tool_result` \
                 block must have a corresponding `tool_use` block in the previous message."
                .into())
        );
        assert_eq!(
            check_anthropic(
                &json!({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})
            ),
            Err("max_tokens: Field required".into())
        );
        assert_eq!(
            check_anthropic(&json!({"model":"m","max_tokens":2000,"stream":true,
                "thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"hi"}]})),
            Err("`max_tokens` must be greater than `thinking.budget_tokens`".into())
        );
        assert_eq!(
            check_anthropic(&base(
                json!([{"role":"user","content":[{"type":"text","text":""}]}])
            )),
            Err("messages: text content blocks must be non-empty".into())
        );
        assert_eq!(
            check_anthropic(&base(json!([{"role":"user","content":[]}]))),
            Err("messages.0: all messages must have non-empty content".into())
        );
    }

    #[test]
    fn images_must_be_what_they_say_and_small_enough() {
        use base64::Engine;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let png = b"\x89PNG\r\n\x1a\n....";
        let anthropic = |media_type: &str, data: String| {
            json!({"model": "m", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": [
                {"type": "text", "text": "see"},
                {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}]}]})
        };
        assert_eq!(
            check_images(Api::Anthropic, &anthropic("image/png", b64(png))),
            Ok(())
        );
        assert_eq!(
            check_images(Api::Anthropic, &anthropic("image/jpeg", b64(png))),
            Err("messages.0.content.1.image.source.base64.data: Image does not match the provided media type image/jpeg".into())
        );
        assert!(check_images(Api::Anthropic, &anthropic("image/png", "%%%".into())).is_err());
        assert!(check_images(Api::Anthropic, &anthropic("image/heic", b64(png))).is_err());
        let openai = |url: String| {
            json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": url}}]}]})
        };
        assert_eq!(
            check_images(
                Api::OpenAi,
                &openai(format!("data:image/png;base64,{}", b64(png)))
            ),
            Ok(())
        );
        assert!(check_images(
            Api::OpenAi,
            &openai(format!("data:text/plain;base64,{}", b64(png)))
        )
        .is_err());
        assert!(check_images(Api::OpenAi, &openai("data:image/png;base64,@@".into())).is_err());
    }

    #[test]
    fn last_user_text_skips_tool_results() {
        let anthropic = json!({"messages":[
            {"role":"user","content":[{"type":"text","text":"look up"},{"type":"text","text":"the weather"}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"t","name":"w","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]});
        assert_eq!(
            last_user_text(Api::Anthropic, &anthropic),
            "look up\nthe weather"
        );
        let openai = json!({"messages":[{"role":"system","content":"s"},{"role":"user","content":"hello"},
            {"role":"assistant","content":null,"tool_calls":[]},{"role":"tool","tool_call_id":"x","content":"r"}]});
        assert_eq!(last_user_text(Api::OpenAi, &openai), "hello");
        assert_eq!(last_user_text(Api::OpenAi, &json!({})), "");
        assert_eq!((estimate_tokens(0), estimate_tokens(9)), (1, 3));
    }
}
