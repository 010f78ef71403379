//! OpenAI's Responses API as the fake answers it (`POST /v1/responses`),
//! after OpenAI's public API reference: the request's checks, with the
//! error bodies the API answers them, and the streamed events in the order
//! it sends them, each with its `sequence_number`.
//!
//! `store: false` is what the gateway sends, so nothing is kept between
//! calls: a reasoning item comes back only with its `encrypted_content`
//! (the fake's is a stand-in), and an item sent without it is one the
//! API would look for and not find.

use serde_json::{json, Value};
use std::borrow::Cow;

use super::checks::{estimate_tokens, Rejection};
use super::frames::{pieces, Reply, TokenCounts};
use super::view::{list, Body, Fields};

/// The created/id values are fixed: the fake is deterministic.
const CREATED: u64 = 1_757_520_815;
const RESPONSE_ID: &str = "resp_fake00000000000000000000000000";
const REASONING_ID: &str = "rs_fake00000000000000000000000000";
const MESSAGE_ID: &str = "msg_fake0000000000000000000000000";
/// A stand-in for the API's encrypted reasoning.
pub(crate) const FAKE_ENCRYPTED: &str = "gAAAAABfakeEncryptedReasoning==";

/// The parameters a request may have (the fake's subset of the API's).
const PARAMETERS: [&str; 25] = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "stream",
    "stream_options",
    "store",
    "max_output_tokens",
    "max_tool_calls",
    "reasoning",
    "include",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "previous_response_id",
    "temperature",
    "top_p",
    "text",
    "truncation",
    "metadata",
    "user",
    "service_tier",
    "background",
];

/// The item types the fake takes (the API takes more: built-in tools').
const ITEM_TYPES: [&str; 4] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
];

/// The image formats the API takes.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// What the answer echoes of its request: the response object as the
/// API's events carry it, and whether reasoning is to come encrypted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub response: Value,
    pub encrypted_reasoning: bool,
}

impl Request {
    pub fn of(body: &Body) -> Self {
        let fields = &body.fields;
        let value = |key: &str| {
            fields
                .get(key)
                .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        };
        let or = |key: &str, default: Value| value(key).unwrap_or(default);
        let response = json!({
            "id": RESPONSE_ID,
            "object": "response",
            "created_at": CREATED,
            "status": "in_progress",
            "background": false,
            "error": null,
            "incomplete_details": null,
            "instructions": or("instructions", Value::Null),
            "max_output_tokens": or("max_output_tokens", Value::Null),
            "max_tool_calls": null,
            "model": or("model", json!("fake-model")),
            "output": [],
            "parallel_tool_calls": or("parallel_tool_calls", json!(true)),
            "previous_response_id": null,
            "prompt_cache_key": or("prompt_cache_key", Value::Null),
            "reasoning": or("reasoning", json!({"effort": null, "summary": null})),
            "safety_identifier": null,
            "service_tier": "auto",
            "store": or("store", json!(true)),
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": or("tool_choice", json!("auto")),
            "tools": or("tools", json!([])),
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": null,
            "user": null,
            "metadata": {},
        });
        let include = value("include").unwrap_or_default();
        Request {
            response,
            encrypted_reasoning: include
                .as_array()
                .is_some_and(|i| i.contains(&json!("reasoning.encrypted_content"))),
        }
    }
}

/// A 400 in OpenAI's shape.
fn refused(message: String, param: Option<String>, code: Option<&str>) -> Rejection {
    Rejection {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error",
            "param": param, "code": code}}),
    }
}

fn missing(param: String) -> Rejection {
    refused(
        format!("Missing required parameter: '{param}'."),
        Some(param),
        Some("missing_required_parameter"),
    )
}

fn unknown(param: String) -> Rejection {
    refused(
        format!("Unknown parameter: '{param}'."),
        Some(param),
        Some("unknown_parameter"),
    )
}

fn invalid_value(param: String, value: &str, supported: &[&str]) -> Rejection {
    let quoted: Vec<String> = supported.iter().map(|s| format!("'{s}'")).collect();
    let listed = match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, and {last}", rest.join(", ")),
        _ => quoted.concat(),
    };
    refused(
        format!("Invalid value: '{value}'. Supported values are: {listed}."),
        Some(param),
        Some("invalid_value"),
    )
}

fn invalid_type(param: String, expected: &str, raw: &serde_json::value::RawValue) -> Rejection {
    let got = match raw.get().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    };
    refused(
        format!("Invalid type for '{param}': expected {expected}, but got {got} instead."),
        Some(param),
        Some("invalid_type"),
    )
}

/// The request's shape as the API checks it: its parameters, its tools
/// (flat function tools), and its input items: each of a known type,
/// every function call answered by an output naming its `call_id` and
/// every output answering an earlier call, reasoning sent back whole and
/// before what it led to.
pub(crate) fn check(body: &Body) -> Result<(), Rejection> {
    let fields = &body.fields;
    if let Some(key) = fields.keys().find(|k| !PARAMETERS.contains(k)) {
        return Err(unknown(key.to_string()));
    }
    match fields.get("model") {
        None => return Err(missing("model".into())),
        Some(raw) if !raw.get().starts_with('"') => {
            return Err(invalid_type("model".into(), "a string", raw))
        }
        _ => {}
    }
    if fields.get("stream").map(|r| r.get()) != Some("true") {
        return Err(refused(
            "the fake LLM only streams: set \"stream\": true".into(),
            Some("stream".into()),
            None,
        ));
    }
    check_tools(fields)?;
    check_reasoning(fields)?;
    let Some(input) = fields.get("input") else {
        return Err(missing("input".into()));
    };
    if input.get().starts_with('"') {
        return Ok(()); // a plain text prompt
    }
    let Some(items) = list(input) else {
        return Err(invalid_type("input".into(), "a string or an array", input));
    };
    check_items(&items)
}

fn check_tools(fields: &Fields) -> Result<(), Rejection> {
    let Some(raw) = fields.get("tools") else {
        return Ok(());
    };
    let Some(tools) = list(raw) else {
        return Err(invalid_type("tools".into(), "an array", raw));
    };
    for (i, tool) in tools.iter().enumerate() {
        let at = |key: &str| format!("tools[{i}].{key}");
        let kind = tool.str("type").ok_or_else(|| missing(at("type")))?;
        if kind != "function" {
            return Err(invalid_value(at("type"), &kind, &["function"]));
        }
        let allowed = ["type", "name", "description", "parameters", "strict"];
        if let Some(key) = tool.keys().find(|k| !allowed.contains(k)) {
            return Err(unknown(at(key)));
        }
        if tool.str("name").is_none() {
            return Err(missing(at("name")));
        }
    }
    Ok(())
}

fn check_reasoning(fields: &Fields) -> Result<(), Rejection> {
    let reasoning = fields.object("reasoning");
    if let Some(effort) = reasoning.str("effort") {
        let efforts = ["minimal", "low", "medium", "high"];
        if !efforts.contains(&&*effort) {
            return Err(invalid_value("reasoning.effort".into(), &effort, &efforts));
        }
    }
    if let Some(summary) = reasoning.str("summary") {
        let summaries = ["auto", "concise", "detailed"];
        if !summaries.contains(&&*summary) {
            return Err(invalid_value(
                "reasoning.summary".into(),
                &summary,
                &summaries,
            ));
        }
    }
    Ok(())
}

fn check_items(items: &[Fields]) -> Result<(), Rejection> {
    let mut calls: Vec<String> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = |key: &str| format!("input[{i}].{key}");
        let kind = match item.str("type") {
            Some(kind) => kind,
            None if item.get("role").is_some() => Cow::Borrowed("message"),
            None => return Err(missing(at("type"))),
        };
        match &*kind {
            "message" => check_message(item, &at)?,
            "function_call" => {
                for key in ["call_id", "name", "arguments"] {
                    match item.get(key) {
                        None => return Err(missing(at(key))),
                        Some(raw) if !raw.get().starts_with('"') => {
                            return Err(invalid_type(at(key), "a string", raw))
                        }
                        _ => {}
                    }
                }
                calls.extend(item.str("call_id").map(String::from));
            }
            "function_call_output" => {
                let id = item.str("call_id").ok_or_else(|| missing(at("call_id")))?;
                if !calls.iter().any(|c| *c == id) {
                    return Err(refused(
                        format!("No tool call found for function call output with call_id {id}."),
                        Some("input".into()),
                        None,
                    ));
                }
                if item.get("output").is_none() {
                    return Err(missing(at("output")));
                }
                answered.push(id.into_owned());
            }
            "reasoning" => {
                let id = item.str("id").unwrap_or_default();
                if item.get("summary").and_then(list).is_none() {
                    return Err(missing(at("summary")));
                }
                if item.str("encrypted_content").is_none() {
                    return Err(refused(
                        format!(
                            "Item with id '{id}' not found. Items are not persisted when `store` is set \
                             to false. Try again with `store` set to true, or remove this item from your input."
                        ),
                        Some("input".into()),
                        None,
                    ));
                }
                // What it led to: a call, or what the assistant said.
                let followed = items
                    .get(i + 1)
                    .is_some_and(|n| match n.str("type").as_deref() {
                        Some("function_call") => true,
                        Some("message") | None => n.str("role").as_deref() == Some("assistant"),
                        _ => false,
                    });
                if !followed {
                    return Err(refused(
                        format!(
                            "Item '{id}' of type 'reasoning' was provided without its required following item."
                        ),
                        Some("input".into()),
                        None,
                    ));
                }
            }
            other => return Err(invalid_value(at("type"), other, &ITEM_TYPES)),
        }
    }
    if let Some(open) = calls.iter().find(|c| !answered.contains(c)) {
        return Err(refused(
            format!("No tool output found for function call {open}."),
            Some("input".into()),
            None,
        ));
    }
    Ok(())
}

/// A message: a role the API knows, and content parts its role may have
/// (the user's are `input_*`, the assistant's `output_text`).
fn check_message(item: &Fields, at: &dyn Fn(&str) -> String) -> Result<(), Rejection> {
    let role = item.str("role").ok_or_else(|| missing(at("role")))?;
    let roles = ["user", "assistant", "system", "developer"];
    if !roles.contains(&&*role) {
        return Err(invalid_value(at("role"), &role, &roles));
    }
    let Some(content) = item.get("content") else {
        return Err(missing(at("content")));
    };
    if content.get().starts_with('"') {
        return Ok(());
    }
    let Some(parts) = list(content) else {
        return Err(invalid_type(at("content"), "a string or an array", content));
    };
    let kinds: &[&str] = match &*role {
        "assistant" => &["output_text", "refusal"],
        _ => &["input_text", "input_image", "input_file"],
    };
    for (j, part) in parts.iter().enumerate() {
        let at = |key: &str| at(&format!("content[{j}].{key}"));
        let kind = part.str("type").ok_or_else(|| missing(at("type")))?;
        if !kinds.contains(&&*kind) {
            return Err(invalid_value(at("type"), &kind, kinds));
        }
        if kind == "input_image" {
            check_image(part, &at)?;
        }
    }
    Ok(())
}

/// An image part: a detail the API knows, and a URL, or a data URL of an
/// image type in base64 (at most 20 MB).
fn check_image(part: &Fields, at: &dyn Fn(&str) -> String) -> Result<(), Rejection> {
    use base64::Engine;
    if let Some(detail) = part.str("detail") {
        let details = ["low", "high", "auto"];
        if !details.contains(&&*detail) {
            return Err(invalid_value(at("detail"), &detail, &details));
        }
    }
    let url = part
        .str("image_url")
        .ok_or_else(|| missing(at("image_url")))?;
    if url.starts_with("https://") || url.starts_with("http://") {
        return Ok(());
    }
    let bad = |message: String| refused(message, Some(at("image_url")), Some("invalid_image_url"));
    let Some((head, data)) = url.strip_prefix("data:").and_then(|u| u.split_once(',')) else {
        return Err(bad(format!(
            "Invalid '{}': expected a URL or a base64-encoded data URL.",
            at("image_url")
        )));
    };
    let mime = head.strip_suffix(";base64").unwrap_or_default();
    if !IMAGE_TYPES.contains(&mime) {
        return Err(bad(format!(
            "Invalid MIME type {head:?}: the image must be png, jpeg, gif or webp, base64-encoded."
        )));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|_| bad(format!("Invalid base64 image in '{}'.", at("image_url"))))?;
    if bytes.len() > 20 * 1024 * 1024 {
        return Err(bad("Image is larger than 20 MB.".into()));
    }
    Ok(())
}

/// The text of the last user message (function call outputs are items of
/// their own, not the user's), which scripts match their trigger against.
pub(crate) fn last_user_text(body: &Body) -> String {
    let Some(input) = body.fields.get("input") else {
        return String::new();
    };
    if let Some(text) = super::view::string(input) {
        return text.into_owned();
    }
    list(input)
        .unwrap_or_default()
        .iter()
        .rev()
        .filter(|item| item.str("role").as_deref() == Some("user"))
        .find_map(|item| {
            if let Some(text) = item.str("content") {
                return Some(text.into_owned());
            }
            let parts = item.get("content").and_then(list).unwrap_or_default();
            let texts: Vec<Cow<str>> = parts
                .iter()
                .filter(|p| p.str("type").as_deref() == Some("input_text"))
                .filter_map(|p| p.str("text"))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        })
        .unwrap_or_default()
}

/// The 400 the API answers when the input exceeds the context window.
pub(crate) fn context_overflow_body() -> Value {
    json!({"error": {
        "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
        "type": "invalid_request_error", "param": "input", "code": "context_length_exceeded"}})
}

/// One event: its type named on the `event:` line, then its JSON, which
/// repeats the type and says where it is in the stream.
fn event(sequence_number: usize, mut data: Value) -> String {
    data["sequence_number"] = json!(sequence_number);
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap_or("message")
    )
}

/// The events of an answer: the response created and in progress; each
/// output item (reasoning, the message, each function call) added, its
/// parts and deltas, and done; then the response completed, whole, with
/// its usage.
pub(crate) fn frames(request: &Request, reply: &Reply, tokens: TokenCounts) -> Vec<String> {
    let mut response = request.response.clone();
    let mut events = vec![
        json!({"type": "response.created", "response": response}),
        json!({"type": "response.in_progress", "response": response}),
    ];
    let mut output = Vec::new();
    if !reply.thinking.is_empty() {
        let index = output.len();
        let id = REASONING_ID;
        let part = |text: &str| json!({"type": "summary_text", "text": text});
        let mut done = json!({"id": id, "type": "reasoning", "summary": [part(&reply.thinking)]});
        let mut added = json!({"id": id, "type": "reasoning", "summary": []});
        if request.encrypted_reasoning {
            done["encrypted_content"] = json!(FAKE_ENCRYPTED);
            added["encrypted_content"] = json!(FAKE_ENCRYPTED);
        }
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        events.push(
            json!({"type": "response.reasoning_summary_part.added", "item_id": id,
            "output_index": index, "summary_index": 0, "part": part("")}),
        );
        events.extend(pieces(&reply.thinking).iter().map(|p| {
            json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                "output_index": index, "summary_index": 0, "delta": p})
        }));
        events.push(
            json!({"type": "response.reasoning_summary_text.done", "item_id": id,
            "output_index": index, "summary_index": 0, "text": reply.thinking}),
        );
        events.push(
            json!({"type": "response.reasoning_summary_part.done", "item_id": id,
            "output_index": index, "summary_index": 0, "part": part(&reply.thinking)}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        output.push(done);
    }
    if !reply.text.is_empty() || reply.calls.is_empty() {
        let index = output.len();
        let id = MESSAGE_ID;
        let part = |text: &str| json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text});
        let item = |status: &str, content: Value| json!({"id": id, "type": "message", "status": status, "content": content, "role": "assistant"});
        let at = json!({"item_id": id, "output_index": index, "content_index": 0});
        let with = |mut fields: Value, kind: &str| {
            fields["type"] = json!(kind);
            fields
        };
        let done = item("completed", json!([part(&reply.text)]));
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": item("in_progress", json!([]))}),
        );
        let mut added = with(at.clone(), "response.content_part.added");
        added["part"] = part("");
        events.push(added);
        events.extend(pieces(&reply.text).iter().map(|p| {
            let mut delta = with(at.clone(), "response.output_text.delta");
            delta["delta"] = json!(p);
            delta["logprobs"] = json!([]);
            delta
        }));
        let mut text_done = with(at.clone(), "response.output_text.done");
        text_done["text"] = json!(reply.text);
        text_done["logprobs"] = json!([]);
        events.push(text_done);
        let mut part_done = with(at, "response.content_part.done");
        part_done["part"] = part(&reply.text);
        events.push(part_done);
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        output.push(done);
    }
    for (n, (call_id, name, args)) in reply.calls.iter().enumerate() {
        let index = output.len();
        let id = format!("fc_fake{n:026}");
        let arguments = args.to_string();
        let item = |status: &str, arguments: &str| {
            json!({"id": id, "type": "function_call", "status": status,
                "arguments": arguments, "call_id": call_id, "name": name})
        };
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": item("in_progress", "")}),
        );
        let chars: Vec<char> = arguments.chars().collect();
        events.extend(chars.chunks(8).map(|c| {
            json!({"type": "response.function_call_arguments.delta", "item_id": id,
                "output_index": index, "delta": c.iter().collect::<String>()})
        }));
        events.push(
            json!({"type": "response.function_call_arguments.done", "item_id": id,
            "output_index": index, "arguments": arguments}),
        );
        let done = item("completed", &arguments);
        events.push(
            json!({"type": "response.output_item.done", "output_index": index, "item": done}),
        );
        output.push(done);
    }
    let input = tokens.input + tokens.cache_read;
    let reasoning = match reply.thinking.is_empty() {
        true => 0,
        false => estimate_tokens(reply.thinking.chars().count()).min(tokens.output),
    };
    response["status"] = json!("completed");
    response["output"] = json!(output);
    response["usage"] = json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": tokens.cache_read},
        "output_tokens": tokens.output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input + tokens.output,
    });
    events.push(json!({"type": "response.completed", "response": response}));
    events
        .into_iter()
        .enumerate()
        .map(|(i, data)| event(i, data))
        .collect()
}

/// The error event sent when a stream fails midway, numbered after the
/// `sequence_number` events before it.
pub(crate) fn error_frame(sequence_number: usize) -> String {
    event(
        sequence_number,
        json!({"type": "error", "code": "server_error",
            "message": "The server had an error processing your request. Sorry about that! You can retry your request.",
            "param": null}),
    )
}

#[cfg(test)]
#[path = "responses_tests.rs"]
mod tests;
