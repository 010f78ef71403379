//! How a tool call fails: in words the model can act on.

use crate::storage::StoreError;
use gsv_protocol::ErrorShape;
use std::fmt;

/// Why a native tool call failed. Its `Display` is the text the model
/// sees (after `Error: ` in the tool result).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError(String);

impl ToolError {
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(text: String) -> Self {
        Self(text)
    }
}

impl From<&str> for ToolError {
    fn from(text: &str) -> Self {
        Self(text.to_string())
    }
}

/// A refusal from a workspace method or another object: the model sees
/// its message, not its code.
impl From<ErrorShape> for ToolError {
    fn from(e: ErrorShape) -> Self {
        Self(e.message)
    }
}

impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        Self(e.to_string())
    }
}
