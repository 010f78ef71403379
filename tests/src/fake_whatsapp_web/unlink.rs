//! Unlinking and lost connections:
//!
//! - From the device: `<iq xmlns="md"><remove-companion-device jid
//!   reason/>`; the server forgets it.
//! - From the phone ([`FakeWhatsAppWeb::logout_from_phone`]): a live socket
//!   gets `<stream:error code="401"><conflict type="device_removed"/>` and
//!   is closed; every later login with those credentials gets
//!   `<failure reason="401"/>` (the client's `LoggedOut`).
//! - [`FakeWhatsAppWeb::drop_socket`]: the socket dies without a word, as
//!   on a dead network; stanzas wait for the next login.
//! - [`FakeWhatsAppWeb::ping`]: the server's own ping, which a live device
//!   answers.

use super::router::result;
use super::wire::{self, child, node, s};
use super::{FakeWhatsAppWeb, Out, World};
use wacore_binary::Node;

impl World {
    /// `remove-companion-device` from the device itself.
    pub(crate) fn on_remove_companion(&mut self, conn: u64, n: &Node) -> Option<Node> {
        let (phone, device) = self.conns.get(&conn)?.device.clone()?;
        let target = child(n, "remove-companion-device").and_then(|c| wire::jid_attr(c, "jid"));
        if target.is_some_and(|t| t.device != device) {
            return Some(super::router::error(n, 403, "forbidden"));
        }
        if let Some(c) = self.companion_mut(&phone, device) {
            c.removed = true;
            c.outbox.clear();
        }
        Some(result(n, vec![]))
    }
}

impl FakeWhatsAppWeb {
    /// The server pings `phone`'s live devices (`<iq xmlns="urn:xmpp:ping"
    /// type="get">`); the ids of the pings, whose answers show up among
    /// [`FakeWhatsAppWeb::nodes_from_devices`]`("iq")`.
    pub fn ping(&self, phone: &str) -> Vec<String> {
        let mut w = self.shared.lock();
        let live: Vec<u64> = w
            .account(phone)
            .companions
            .values()
            .filter_map(|c| c.conn)
            .collect();
        let mut ids = Vec::new();
        for conn in live {
            let id = w.new_id();
            let n = node(
                "iq",
                &[
                    ("from", s(wire::SERVER)),
                    ("type", s("get")),
                    ("xmlns", s("urn:xmpp:ping")),
                    ("id", s(id.clone())),
                ],
                vec![node("ping", &[], vec![])],
            );
            w.send(conn, n);
            ids.push(id);
        }
        ids
    }

    /// The user unlinks every device of `phone` from the phone.
    pub fn logout_from_phone(&self, phone: &str) {
        let mut w = self.shared.lock();
        let live: Vec<u64> = w
            .account_mut(phone)
            .companions
            .values_mut()
            .filter(|c| !c.removed)
            .filter_map(|c| {
                c.removed = true;
                c.outbox.clear();
                c.conn
            })
            .collect();
        for conn in live {
            let n = node(
                "stream:error",
                &[("code", s("401"))],
                vec![node("conflict", &[("type", s("device_removed"))], vec![])],
            );
            w.send(conn, n);
            w.close(conn, Out::Close);
        }
    }

    /// Closes the sockets of `phone`'s devices at once, without a word, as
    /// a dead network would. From this call on, stanzas for those devices
    /// wait for their next login.
    pub fn drop_socket(&self, phone: &str) {
        let mut w = self.shared.lock();
        let live: Vec<u64> = w
            .account_mut(phone)
            .companions
            .values_mut()
            .filter_map(|c| c.conn.take())
            .collect();
        for conn in live {
            if let Some(c) = w.conns.get_mut(&conn) {
                c.device = None;
                c.active = false;
            }
            w.close(conn, Out::Drop);
        }
    }
}
