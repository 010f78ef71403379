//! `POST /v1/embeddings` as OpenAI answers it: `{"object": "list", "data":
//! [{"object": "embedding", "index", "embedding"}], "model", "usage"}` for
//! an `input` string or list of strings; 400 for a missing model or input,
//! 401 for a wrong key when one is expected; 500 while failing is on.
//!
//! The vectors are a hashed bag of words (64 dimensions), so texts that
//! share words are near; a few synonyms map to one word, so a test can
//! find by meaning what keyword search misses.

use serde_json::{json, Value};

pub const DIMENSIONS: usize = 64;

/// The fake's notion of meaning: these words count as the second.
const SYNONYMS: &[(&str, &str)] = &[
    ("espresso", "coffee"),
    ("latte", "coffee"),
    ("physician", "doctor"),
];

pub fn vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; DIMENSIONS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        let word = SYNONYMS
            .iter()
            .find(|(w, _)| *w == word)
            .map_or(word.as_str(), |(_, s)| *s);
        let h = word.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        v[(h % DIMENSIONS as u64) as usize] += 1.0;
    }
    v
}

/// The status and body of an answer to `body` (already parsed).
pub fn answer(body: &Value, key_ok: bool, failing: bool) -> (u16, Value) {
    let error = |status: u16, message: &str| {
        (
            status,
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}}),
        )
    };
    if !key_ok {
        return error(401, "Incorrect API key provided.");
    }
    if failing {
        return (
            500,
            json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error", "param": null, "code": null}}),
        );
    }
    let Some(model) = body["model"].as_str() else {
        return error(400, "you must provide a model parameter");
    };
    let inputs: Vec<String> = match &body["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(|i| i.as_str().map(String::from))
            .collect(),
        _ => {
            return error(
                400,
                "'input' must be a string or a non-empty array of strings",
            )
        }
    };
    let tokens: usize = inputs.iter().map(|i| i.split_whitespace().count()).sum();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": vector(text)}))
        .collect();
    (
        200,
        json!({"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_like_openai() {
        let (status, body) = answer(
            &json!({"model": "text-embedding-3-small", "input": ["a b", "espresso"]}),
            true,
            false,
        );
        assert_eq!(status, 200);
        assert_eq!(body["data"][1]["index"], 1);
        assert_eq!(
            body["data"][1]["embedding"].as_array().map(Vec::len),
            Some(DIMENSIONS)
        );
        assert_eq!(vector("espresso"), vector("coffee"));
        assert_eq!(answer(&json!({"input": "x"}), true, false).0, 400);
        assert_eq!(
            answer(&json!({"model": "m", "input": []}), true, false).0,
            400
        );
        assert_eq!(
            answer(&json!({"model": "m", "input": "x"}), false, false).0,
            401
        );
        assert_eq!(
            answer(&json!({"model": "m", "input": "x"}), true, true).0,
            500
        );
    }
}
