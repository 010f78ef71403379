//! The Session as `session_logs` sees it (`ThisSession`): its meta, its
//! size and a page of its history, so the native tools need not know the
//! Session object. (Here rather than in `session_do/` only until the
//! Session's owner moves it there.)

use crate::selfreport::logs::ThisSession;
use crate::session::meta::SessionMeta;
use crate::worker::session_do::Core;
use gsv_protocol::{ErrorShape, Message};

impl ThisSession for Core {
    fn meta(&self) -> Result<SessionMeta, ErrorShape> {
        Core::meta(self, "")
    }

    fn message_count(&self) -> Result<u64, ErrorShape> {
        Core::message_count(self)
    }

    fn messages(&self, start: usize, take: usize) -> Result<Vec<Message>, ErrorShape> {
        Core::messages(
            self,
            "SELECT data FROM messages ORDER BY idx LIMIT ? OFFSET ?",
            vec![(take as i64).into(), (start as i64).into()],
        )
    }
}
