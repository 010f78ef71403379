//! What a linked device says about messages, and how the server and the
//! phones take it (the client's `receipt.rs`, `retry.rs` and
//! `features/chatstate.rs` for what it sends; whatsmeow's `receipt.go` and
//! `retry.go` for the other side):
//!
//! - `<receipt>`: delivery (no `type`), `read`, `played`, `inactive`,
//!   `peer_msg`, `retry`, …, ids in `id` and `<list><item id/>`. The server
//!   acks it (`<ack class="receipt">`); for the messages it names it is the
//!   device's ack, so they leave its outbox.
//! - `type="retry"`: the device could not open a phone's message. The phone
//!   sends it again with `<enc count>`, over a fresh session from the
//!   receipt's `<keys>` bundle when it carries one.
//! - `<chatstate>`: `composing` (`media="audio"`: recording) and `paused`.

use super::messages::{device_address, enc_node, kinds};
use super::signal::{pad, Bundle};
use super::wire::{self, attr, child, children, node, s};
use super::{FakeWhatsAppWeb, World};
use wacore_binary::{Jid, Node, Server};
use waproto::buffa::Message as _;

/// A receipt a linked device sent for messages of the account it is kept in.
#[derive(Debug, Clone, PartialEq)]
pub struct CompanionReceipt {
    /// `delivery` (no type on the wire), `read`, `played`, `retry`, …
    pub kind: String,
    pub ids: Vec<String>,
    /// The receipt's `to` (the chat).
    pub chat: String,
    pub participant: Option<String>,
    /// The device that sent it.
    pub from: String,
}

/// A chat state a linked device sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatState {
    /// `composing`, `paused`, or `recording` (composing audio).
    pub state: String,
    pub to: String,
    pub from: String,
}

impl World {
    /// A `<receipt>` from the device on `conn`.
    pub(crate) fn on_receipt(&mut self, conn: u64, n: &Node) {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return;
        };
        let id = attr(n, "id").unwrap_or_default();
        let kind = attr(n, "type").unwrap_or_else(|| "delivery".into());
        let to = wire::jid_attr(n, "to");
        let participant = wire::jid_attr(n, "participant");
        let mut ids = vec![id.clone()];
        if let Some(list) = child(n, "list") {
            ids.extend(children(list, "item").filter_map(|i| attr(i, "id")));
        }
        let mut ack_attrs = vec![("class", s("receipt")), ("id", s(id))];
        if let Some(t) = &to {
            ack_attrs.push(("from", wire::j(t)));
        }
        if kind != "delivery" {
            ack_attrs.push(("type", s(kind.clone())));
        }
        self.send(conn, node("ack", &ack_attrs, vec![]));
        // A receipt for a message is the device's ack of it: it leaves the
        // outbox (and the offline queue).
        let from_chat = to.as_ref().and_then(|t| self.phone_of(t));
        let in_group = to.as_ref().is_some_and(|t| t.server == Server::Group);
        let chat_str = to.as_ref().map(|t| t.to_string()).unwrap_or_default();
        let parts: Vec<(String, String)> = self
            .companion_mut(&phone, device)
            .map(|c| {
                c.outbox
                    .iter()
                    .map(|p| (p.id.clone(), p.from.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let acked: Vec<(String, String)> = parts
            .into_iter()
            .filter(|(pid, pfrom)| {
                ids.contains(pid)
                    && if in_group {
                        *pfrom == chat_str
                    } else {
                        pfrom
                            .parse::<Jid>()
                            .ok()
                            .and_then(|j| self.phone_of(&j))
                            .is_some_and(|p| Some(p) == from_chat)
                    }
            })
            .collect();
        if let Some(c) = self.companion_mut(&phone, device) {
            c.outbox
                .retain(|p| !acked.contains(&(p.id.clone(), p.from.clone())));
        }
        if kind == "retry" {
            self.on_retry(&phone, device, n);
        }
        // Kept with the account whose messages it is about.
        let about = participant
            .as_ref()
            .or(to.as_ref())
            .and_then(|j| self.phone_of(j));
        let Some(about) = about else {
            return;
        };
        let r = CompanionReceipt {
            kind,
            ids,
            chat: to.map(|t| t.to_string()).unwrap_or_default(),
            participant: participant.map(|p| p.to_string()),
            from: wire::pn(&phone, device).to_string(),
        };
        self.account_mut(&about).receipts.push(r);
    }

    /// A retry receipt: the device could not open a message a phone sent
    /// it. The phone sends it again, over a fresh session from the bundle the
    /// receipt carries (`<keys>`, from the second retry on) or its current
    /// one, its `<enc count>` the retry count.
    fn on_retry(&mut self, phone: &str, device: u16, n: &Node) {
        let id = attr(n, "id").unwrap_or_default();
        let Some(sender) = wire::jid_attr(n, "to").and_then(|t| self.phone_of(&t)) else {
            return;
        };
        let Some((to, message)) = self.account(&sender).sent.get(&id).cloned() else {
            return;
        };
        if to != phone {
            return;
        }
        let count = child(n, "retry")
            .and_then(|r| attr(r, "count"))
            .unwrap_or_else(|| "1".into());
        if let Some(keys) = child(n, "keys") {
            let key32 =
                |b: Option<Vec<u8>>| b.and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok());
            let identity = key32(wire::child_bytes(keys, "identity"));
            let prekey = child(keys, "key").and_then(|k| {
                Some((
                    wire::child_uint(k, "id")?,
                    key32(wire::child_bytes(k, "value"))?,
                ))
            });
            let skey = child(keys, "skey").and_then(|k| {
                Some((
                    wire::child_uint(k, "id")?,
                    key32(wire::child_bytes(k, "value"))?,
                    wire::child_bytes(k, "signature")?,
                ))
            });
            let registration = wire::child_uint(n, "registration");
            if let (Some(identity), Some(signed_prekey), Some(registration_id)) =
                (identity, skey, registration)
            {
                let bundle = Bundle {
                    registration_id,
                    identity,
                    prekey,
                    signed_prekey,
                };
                let addr = device_address(&self.account(phone).lid, device);
                if let Err(e) = self
                    .account_mut(&sender)
                    .signal
                    .start_session(&addr, &bundle)
                {
                    eprintln!("[fake-wa] retry: no new session: {e}");
                    return;
                }
            }
        }
        let (stanza_type, mediatype) = kinds(&message);
        let plain = pad(message.encode_to_vec());
        let Some((kind, ct)) = self.encrypt_for_device(&sender, phone, device, &plain) else {
            return;
        };
        let a = self.account(&sender);
        let mut enc = enc_node(kind, ct, mediatype);
        enc.attrs.insert("count", s(count));
        let stanza = node(
            "message",
            &[
                ("from", wire::j(&a.pn())),
                ("sender_lid", wire::j(&a.lid_jid())),
                ("id", s(id)),
                ("t", s(super::noise::now_secs().to_string())),
                ("type", s(stanza_type)),
                ("notify", s(a.push_name.clone())),
            ],
            vec![enc],
        );
        self.enqueue(phone, device, stanza);
    }

    pub(crate) fn on_chatstate(&mut self, conn: u64, n: &Node) {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return;
        };
        let Some(to) = wire::jid_attr(n, "to") else {
            return;
        };
        let Some(state) = n.children().and_then(|c| c.first()) else {
            return;
        };
        let name = if state.tag == "composing" && attr(state, "media").as_deref() == Some("audio") {
            "recording".to_string()
        } else {
            state.tag.to_string()
        };
        let about = if to.server == Server::Group {
            None
        } else {
            self.phone_of(&to)
        };
        let c = ChatState {
            state: name,
            to: to.to_string(),
            from: wire::pn(&phone, device).to_string(),
        };
        match about {
            Some(p) => self.account_mut(&p).chatstates.push(c),
            None => {
                if let Some(g) = self.groups.get_mut(to.user.as_str()) {
                    g.chatstates.push(c);
                }
            }
        }
    }
}

impl FakeWhatsAppWeb {
    /// `reader`'s phone reads messages `ids` that `sender`'s linked devices
    /// sent it: each live or queued device of `sender` gets the read
    /// receipt (`type="read"`, the first id in `id`, the rest in `<list>`).
    pub fn read_by_phone(&self, reader: &str, sender: &str, ids: &[&str]) {
        let Some((first, rest)) = ids.split_first() else {
            return;
        };
        let mut w = self.shared.lock();
        let from = w.account(reader).pn();
        let devices: Vec<u16> = w
            .account(sender)
            .companions
            .values()
            .filter(|c| !c.removed)
            .map(|c| c.device)
            .collect();
        for d in devices {
            let mut kids = Vec::new();
            if !rest.is_empty() {
                kids.push(node(
                    "list",
                    &[],
                    rest.iter()
                        .map(|id| node("item", &[("id", s(*id))], vec![]))
                        .collect(),
                ));
            }
            let receipt = node(
                "receipt",
                &[
                    ("from", wire::j(&from)),
                    ("id", s(*first)),
                    ("type", s("read")),
                    ("t", s(super::noise::now_secs().to_string())),
                ],
                kids,
            );
            w.enqueue(sender, d, receipt);
        }
    }
}
