//! Embeddings from an OpenAI-compatible `/embeddings` endpoint, for
//! hybrid search (configured with `memory.embeddings`).

use crate::memory::calls::EmbeddingsConfig;
use crate::worker::body::BodyReader;
use serde::Deserialize;
use worker::{Fetch, Headers, Method, Request, RequestInit};

#[derive(Deserialize)]
struct Datum {
    embedding: Vec<f32>,
    index: usize,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Datum>,
}

/// One vector per text, in order.
pub async fn embed(cfg: &EmbeddingsConfig, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
    let headers = Headers::new();
    let set = |k: &str, v: &str| headers.set(k, v).map_err(|e| e.to_string());
    set("content-type", "application/json")?;
    if let Some(key) = &cfg.api_key {
        set("authorization", &format!("Bearer {key}"))?;
    }
    let body = serde_json::json!({ "model": cfg.model, "input": texts }).to_string();
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.into()));
    let req = Request::new_with_init(&cfg.url, &init).map_err(|e| e.to_string())?;
    let res = Fetch::Request(req)
        .send()
        .await
        .map_err(|e| format!("embeddings: {e}"))?;
    let text = BodyReader::new(&res)
        .read_text()
        .await
        .map_err(|e| e.to_string())?;
    if !(200..300).contains(&res.status_code()) {
        return Err(format!(
            "embeddings: HTTP {}: {}",
            res.status_code(),
            text.chars().take(200).collect::<String>()
        ));
    }
    let mut answer: Answer = serde_json::from_str(&text).map_err(|e| format!("embeddings: {e}"))?;
    if answer.data.len() != texts.len() {
        return Err(format!(
            "embeddings: {} vectors for {} texts",
            answer.data.len(),
            texts.len()
        ));
    }
    answer.data.sort_by_key(|d| d.index);
    Ok(answer.data.into_iter().map(|d| d.embedding).collect())
}
