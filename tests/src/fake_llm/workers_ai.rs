//! Workers AI's REST API as the fake answers it: `POST
//! /client/v4/accounts/{account_id}/ai/run/{model}` with a Cloudflare API
//! token, the model's inputs as the body. The local double of the `AI`
//! binding (`tests/support/ai-binding`) calls it, so the gateway's
//! `env.AI.run(model, inputs)` reaches this fake. The chat models that call
//! tools take Chat Completions input and stream `chat.completion.chunk`s,
//! so those checks and frames are OpenAI's; errors come in Cloudflare's
//! v4 envelope with Workers AI's internal codes
//! (<https://developers.cloudflare.com/workers-ai/platform/errors/>).

use serde_json::{json, Value};

/// The model a request path names (`@cf/moonshotai/kimi-k2.5`, its `@`
/// as sent or percent-encoded), when the path is a run.
pub(crate) fn model_in_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/client/v4/accounts/")?;
    let (account, model) = rest.split_once("/ai/run/")?;
    let model = match model.strip_prefix("%40") {
        Some(rest) => format!("@{rest}"),
        None => model.to_string(),
    };
    (!account.is_empty() && !account.contains('/') && model.starts_with('@')).then_some(model)
}

/// The v4 error envelope for `status`, with the internal code Workers AI
/// uses for it.
pub(crate) fn error_body(status: u16, message: Option<&str>) -> Value {
    let (code, default) = match status {
        400 => (5007, "No such model or task"),
        401 => (10000, "Authentication error"),
        403 => (3023, "Service unavailable for account"),
        408 => (3007, "Request timeout"),
        413 => (3006, "Request is too large"),
        429 => (3040, "No more data centers to forward the request to"),
        _ => (3001, "Unknown internal error"),
    };
    json!({"result": null, "success": false,
        "errors": [{"code": code, "message": message.unwrap_or(default)}], "messages": []})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_name_their_model_and_errors_their_code() {
        assert_eq!(
            model_in_path("/client/v4/accounts/0123abcd/ai/run/@cf/moonshotai/kimi-k2.5"),
            Some("@cf/moonshotai/kimi-k2.5".to_string())
        );
        assert_eq!(
            model_in_path("/client/v4/accounts/0123abcd/ai/run/%40cf/zai-org/glm-4.7-flash"),
            Some("@cf/zai-org/glm-4.7-flash".to_string())
        );
        assert_eq!(model_in_path("/client/v4/accounts//ai/run/@cf/x"), None);
        assert_eq!(model_in_path("/v1/chat/completions"), None);
        assert_eq!(
            error_body(429, None),
            json!({"result": null, "success": false, "messages": [],
                "errors": [{"code": 3040, "message": "No more data centers to forward the request to"}]})
        );
    }
}
