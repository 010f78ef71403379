//! `model.check`: one tiny model call, to tell whether a provider, model
//! and key work (`gsv setup` before it keeps a key, `gsv doctor`).

use serde::{Deserialize, Serialize};

/// `model.check` params: each field left out is the configured one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelCheckParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A key to try instead of the configured one: used for this call
    /// only, never stored, logged or sent back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

/// Why a check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ModelCheckFailure {
    /// Nothing was called: no key, or no model.
    Unusable,
    /// The key was refused.
    Auth,
    RateLimited,
    /// The provider's own trouble (5xx, overloaded).
    Server,
    /// The provider could not be reached, or the answer broke off.
    Network,
    Timeout,
    /// Any other refusal: an unknown model, a malformed request.
    Invalid,
}

/// `model.check` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelCheckResult {
    pub ok: bool,
    pub provider: String,
    pub model: String,
    /// The wire format spoken (`anthropic-messages`, `openai-completions`, …).
    pub api: String,
    /// Where the call went (a base URL, or `binding AI`); empty when
    /// nothing was called.
    pub endpoint: String,
    /// Whether a key was used for the call (never the key).
    pub has_key: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<ModelCheckFailure>,
    /// The failure in words, the provider's own where it gave some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// From the request to the whole answer (0 when nothing was called).
    pub latency_ms: u64,
}
