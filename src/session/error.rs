//! What can go wrong inside the Session object. Its handlers and run loop
//! pass this around; it takes the wire's `ErrorShape` only where a request
//! is answered (`worker::session_do`), and a run's error event carries its
//! text.

use gsv_protocol::{codes, ErrorShape};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum SessionError {
    /// SQLite, R2 or (de)serialization failed under the session.
    Storage(String),
    /// A run or a reset holds the session; the request may be repeated later.
    Busy(String),
    /// What the request names is not there.
    NotFound(String),
    /// The request cannot be done as asked.
    Invalid(String),
    /// The settings leave the run nothing to call (no key, unknown model).
    Unusable(String),
    /// A message named a config or node revision this session does not
    /// have: the gateway sends it again with them whole.
    Stale(String),
    /// An error already in the wire's shape: another object's answer or a
    /// malformed internal request.
    Wire(ErrorShape),
}

pub type Res<T> = std::result::Result<T, SessionError>;

impl SessionError {
    pub fn storage(e: impl fmt::Display) -> Self {
        Self::Storage(e.to_string())
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Storage(m)
            | Self::Busy(m)
            | Self::NotFound(m)
            | Self::Invalid(m)
            | Self::Unusable(m)
            | Self::Stale(m) => f.write_str(m),
            Self::Wire(e) => f.write_str(&e.message),
        }
    }
}

impl From<SessionError> for ErrorShape {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Storage(m) => ErrorShape::new(codes::INTERNAL, m),
            SessionError::Busy(m) => ErrorShape::new(codes::CONFLICT, m).retryable(true),
            SessionError::NotFound(m) => ErrorShape::new(codes::NOT_FOUND, m),
            SessionError::Invalid(m) | SessionError::Unusable(m) => {
                ErrorShape::new(codes::BAD_REQUEST, m)
            }
            SessionError::Stale(m) => ErrorShape::new(crate::session::internal::STALE_STATE, m),
            SessionError::Wire(e) => e,
        }
    }
}

impl From<ErrorShape> for SessionError {
    fn from(e: ErrorShape) -> Self {
        Self::Wire(e)
    }
}

impl From<serde_json::Error> for SessionError {
    fn from(e: serde_json::Error) -> Self {
        Self::storage(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_takes_its_wire_shape() {
        assert_eq!(
            ErrorShape::from(SessionError::Busy("being reset".into())),
            ErrorShape::new(codes::CONFLICT, "being reset").retryable(true)
        );
        assert_eq!(
            ErrorShape::from(SessionError::NotFound("no such id".into())),
            ErrorShape::new(codes::NOT_FOUND, "no such id")
        );
        assert_eq!(
            ErrorShape::from(SessionError::Invalid("bad".into())),
            ErrorShape::new(codes::BAD_REQUEST, "bad")
        );
        assert_eq!(
            ErrorShape::from(SessionError::Storage("disk".into())),
            ErrorShape::new(codes::INTERNAL, "disk")
        );
        assert_eq!(
            ErrorShape::from(SessionError::Stale("no config at r1".into())),
            ErrorShape::new(crate::session::internal::STALE_STATE, "no config at r1")
        );
        let wire = ErrorShape::new(codes::UNAVAILABLE, "node gone").retryable(true);
        assert_eq!(ErrorShape::from(SessionError::from(wire.clone())), wire);
        assert_eq!(SessionError::Wire(wire).to_string(), "node gone");
    }
}
