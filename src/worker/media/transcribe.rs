//! One voice note to text, with the service `crate::media::transcribe`
//! chose: an OpenAI-compatible `/audio/transcriptions` endpoint (multipart,
//! as OpenAI takes it) or Workers AI's Whisper through the `AI` binding.

use crate::media::transcribe::{
    openai_request, openai_text, upload_name, workers_ai_text, Transcriber,
};
use crate::worker::body::BodyReader;
use futures::future::{select, Either};
use gsv_protocol::Attachment;
use std::time::Duration;
use worker::{Bucket, Delay, Env, Fetch, Headers, Method, Request, RequestInit};

/// A transcription that takes longer than this is given up.
const TIMEOUT_MS: u64 = 120_000;

pub async fn transcribe(
    env: &Env,
    bucket: &Bucket,
    service: &Transcriber,
    audio: &Attachment,
) -> Result<String, String> {
    let object = bucket
        .get(&audio.r2_key)
        .execute()
        .await
        .map_err(|e| format!("reading the audio failed: {e}"))?
        .ok_or_else(|| "the audio file is gone".to_string())?;
    let bytes = match object.body() {
        Some(body) => body
            .bytes()
            .await
            .map_err(|e| format!("reading the audio failed: {e}"))?,
        None => Vec::new(),
    };
    let call = async {
        match service {
            Transcriber::OpenAi {
                url,
                api_key,
                model,
            } => openai(url, api_key.as_deref(), model, audio, &bytes).await,
            Transcriber::WorkersAi { model } => workers_ai(env, model, &bytes).await,
        }
    };
    let timeout = Delay::from(Duration::from_millis(TIMEOUT_MS));
    let outcome = match select(Box::pin(call), timeout).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err(format!(
            "the transcription service did not answer within {} s",
            TIMEOUT_MS / 1000
        )),
    };
    outcome
}

/// `env.AI.run(model, {audio})` through JS directly (serde through
/// `serde-wasm-bindgen` would add its (de)serializers to the Wasm for one
/// string each way).
async fn workers_ai(env: &Env, model: &str, bytes: &[u8]) -> Result<String, String> {
    use js_sys::{Object, Reflect};
    use wasm_bindgen::JsValue;
    let failed = |e: JsValue| format!("Workers AI failed: {e:?}");
    let ai = crate::worker::bindings::ai(env, crate::worker::bindings::AI)
        .ok_or_else(|| "the gateway has no AI binding".to_string())?;
    let input = Object::new();
    let audio = JsValue::from_str(&crate::media::hydrate::base64_encode(bytes));
    Reflect::set(&input, &JsValue::from_str("audio"), &audio).map_err(failed)?;
    let promise = ai.run(model, &input).map_err(failed)?;
    let result = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(failed)?;
    let text = Reflect::get(&result, &JsValue::from_str("text"))
        .ok()
        .and_then(|t| t.as_string());
    workers_ai_text(text)
}

async fn openai(
    url: &str,
    api_key: Option<&str>,
    model: &str,
    audio: &Attachment,
    bytes: &[u8],
) -> Result<String, String> {
    let boundary = format!("gsv-{}", uuid::Uuid::new_v4().simple());
    let name = upload_name(audio.filename.as_deref(), &audio.mime_type);
    let (content_type, body) = openai_request(&boundary, &name, &audio.mime_type, bytes, model);
    let unreached = |e: worker::Error| format!("the transcription service was not reached: {e}");
    let headers = Headers::new();
    headers
        .set("content-type", &content_type)
        .map_err(unreached)?;
    if let Some(key) = api_key {
        headers
            .set("authorization", &format!("Bearer {key}"))
            .map_err(unreached)?;
    }
    let array = js_sys::Uint8Array::from(body.as_slice());
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(array.into()));
    let req = Request::new_with_init(url, &init).map_err(unreached)?;
    let resp = Fetch::Request(req).send().await.map_err(unreached)?;
    let text = BodyReader::new(&resp).read_text().await.unwrap_or_default();
    openai_text(resp.status_code(), &text)
}
