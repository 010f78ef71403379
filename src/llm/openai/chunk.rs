//! The parts of a `chat.completion.chunk` the decoder reads.
//!
//! A chunk is read as this type rather than as a `Value`: its ids, model,
//! fingerprint and logprobs are skipped without being built (a map per
//! chunk, several chunks per answer, was most of a turn's decoding). A
//! chunk of some other shape than the type (a compatible server's
//! variation) is read from a `Value` the old way, so every chunk is read as
//! it always was.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct Chunk {
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub usage: Option<Value>,
    /// Only the first choice is read; the rest are never asked for (`n`).
    #[serde(default)]
    pub choices: Vec<Choice>,
}

#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct Choice {
    #[serde(default)]
    pub delta: Delta,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, PartialEq, Deserialize)]
pub(super) struct Delta {
    #[serde(default)]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub tool_calls: Option<Value>,
}

impl Chunk {
    /// Reads a chunk's data; `Err` is the JSON's own error.
    pub fn parse(data: &str) -> Result<Chunk, serde_json::Error> {
        match serde_json::from_str(data) {
            Ok(chunk) => Ok(chunk),
            Err(_) => serde_json::from_str::<Value>(data).map(|v| Chunk::from_value(&v)),
        }
    }

    /// What the decoder reads of any JSON value: strings where strings
    /// belong, and nothing of what is not one.
    fn from_value(chunk: &Value) -> Chunk {
        let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
        let choices = chunk.pointer("/choices/0").map(|choice| {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            Choice {
                delta: Delta {
                    reasoning_content: text(delta, "reasoning_content"),
                    reasoning: text(delta, "reasoning"),
                    content: text(delta, "content"),
                    tool_calls: delta.get("tool_calls").cloned(),
                },
                finish_reason: text(choice, "finish_reason"),
            }
        });
        Chunk {
            error: chunk.get("error").cloned(),
            usage: chunk.get("usage").cloned(),
            choices: choices.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn delta(content: &str) -> Delta {
        Delta {
            content: Some(content.to_string()),
            ..Delta::default()
        }
    }

    #[test]
    fn a_real_chunk_is_read_as_its_type() {
        let data = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"h\u00e9llo\n"},"logprobs":null,"finish_reason":null}]}"#;
        assert_eq!(
            serde_json::from_str::<Chunk>(data).ok(),
            Chunk::parse(data).ok()
        );
        assert_eq!(
            Chunk::parse(data).unwrap(),
            Chunk {
                choices: vec![Choice {
                    delta: delta("héllo\n"),
                    finish_reason: None
                }],
                ..Chunk::default()
            }
        );
    }

    #[test]
    fn other_shapes_are_read_as_a_value_was() {
        let cases = [
            // Not strings where strings belong: left out, as before.
            (
                json!({"choices":[{"delta":{"content":5,"reasoning":"r"},"finish_reason":7}]}),
                Chunk {
                    choices: vec![Choice {
                        delta: Delta {
                            reasoning: Some("r".into()),
                            ..Delta::default()
                        },
                        finish_reason: None,
                    }],
                    ..Chunk::default()
                },
            ),
            // A null delta, and a second choice that is not an object.
            (
                json!({"choices":[{"delta":null,"finish_reason":"stop"}, 3]}),
                Chunk {
                    choices: vec![Choice {
                        delta: Delta::default(),
                        finish_reason: Some("stop".into()),
                    }],
                    ..Chunk::default()
                },
            ),
            // No choices array at all; an error and usage kept whole.
            (
                json!({"choices":null,"error":{"message":"x"},"usage":"n/a"}),
                Chunk {
                    error: Some(json!({"message":"x"})),
                    usage: Some(json!("n/a")),
                    choices: vec![],
                },
            ),
        ];
        for (data, want) in cases {
            let data = data.to_string();
            assert!(serde_json::from_str::<Chunk>(&data).is_err(), "{data}");
            assert_eq!(Chunk::parse(&data).unwrap(), want, "{data}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_its_error() {
        let err = Chunk::parse("{not json").unwrap_err();
        assert_eq!(
            err.to_string(),
            serde_json::from_str::<Value>("{not json")
                .unwrap_err()
                .to_string()
        );
    }
}
