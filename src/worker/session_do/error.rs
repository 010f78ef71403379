//! The Session's errors (`crate::session::error`) from the Worker's own.

pub use crate::session::error::{Res, SessionError};

impl From<worker::Error> for SessionError {
    fn from(e: worker::Error) -> Self {
        Self::storage(e)
    }
}
