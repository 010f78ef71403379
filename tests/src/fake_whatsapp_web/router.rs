//! Where each stanza from a device goes: `<iq>` by namespace and child
//! (answered with the device's id, `type="result"` or `type="error"` with
//! `<error code text>` as the server answers), `<ack>` (a delivered stanza
//! leaves the device's outbox), `<message>`, `<receipt>`, `<chatstate>`,
//! `<presence>` and `<ib>`. An IQ the double does not serve is answered
//! `501 feature-not-implemented` and kept for the tests to see.

use super::wire::{self, attr, child, node, s};
use super::World;
use wacore_binary::Node;

/// `<iq type="result">` for `req`, with `children`.
pub(crate) fn result(req: &Node, children: Vec<Node>) -> Node {
    node(
        "iq",
        &[
            ("from", s(wire::SERVER)),
            ("type", s("result")),
            ("id", s(attr(req, "id").unwrap_or_default())),
        ],
        children,
    )
}

/// `<iq type="error"><error code text/></iq>` for `req`.
pub(crate) fn error(req: &Node, code: u16, text: &str) -> Node {
    node(
        "iq",
        &[
            ("from", s(wire::SERVER)),
            ("type", s("error")),
            ("id", s(attr(req, "id").unwrap_or_default())),
        ],
        vec![node(
            "error",
            &[("code", s(code.to_string())), ("text", s(text))],
            vec![],
        )],
    )
}

impl World {
    pub(crate) fn route(&mut self, conn: u64, n: Node) {
        match n.tag.as_ref() {
            "iq" => self.on_iq(conn, n),
            "ack" => self.on_ack(conn, &n),
            "message" => self.on_message(conn, &n),
            "receipt" => self.on_receipt(conn, &n),
            "chatstate" => self.on_chatstate(conn, &n),
            "presence" => {}
            "ib" => {
                if let Some(b) = child(&n, "offline_batch") {
                    let count = attr(b, "count").and_then(|c| c.parse().ok()).unwrap_or(0);
                    self.on_offline_batch(conn, count);
                }
            }
            _ => {}
        }
    }

    fn on_iq(&mut self, conn: u64, n: Node) {
        let kind = attr(&n, "type").unwrap_or_default();
        if kind == "result" || kind == "error" {
            self.on_iq_answer(conn, &n);
            return;
        }
        let xmlns = attr(&n, "xmlns").unwrap_or_default();
        let first = n
            .children()
            .and_then(|c| c.first())
            .map(|c| c.tag.to_string())
            .unwrap_or_default();
        let logged_in = self.conns.get(&conn).is_some_and(|c| c.device.is_some());
        let answer = match (xmlns.as_str(), kind.as_str(), first.as_str()) {
            ("w:p", "get", _) => Some(result(&n, vec![])),
            ("md", "set", "link_code_companion_reg") => self.on_link_code(conn, &n),
            _ if !logged_in => Some(error(&n, 401, "not-authorized")),
            ("passive", "set", "active") => {
                self.send(conn, result(&n, vec![]));
                self.on_active(conn);
                None
            }
            ("passive", "set", "passive") => {
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.active = false;
                }
                Some(result(&n, vec![]))
            }
            ("encrypt", _, _) => Some(self.on_encrypt(conn, &n)),
            ("usync", "get", "usync") => Some(self.on_usync(conn, &n)),
            ("abt", "get", "props") => Some(result(
                &n,
                vec![node(
                    "props",
                    &[
                        ("protocol", s("1")),
                        ("ab_key", s("fake-wa-ab")),
                        ("hash", s("fake-wa-props-1")),
                        ("refresh", s("86400")),
                    ],
                    vec![],
                )],
            )),
            ("blocklist", "get", _) => Some(result(&n, vec![node("list", &[], vec![])])),
            ("privacy", "get", "privacy") => Some(result(&n, vec![privacy()])),
            ("privacy", "set", "tokens") => Some(self.on_tokens(&n)),
            ("w:sync:app:state", "set", "sync") => Some(self.on_app_state(conn, &n)),
            ("w:m", "set", "media_conn") => Some(result(
                &n,
                vec![node(
                    "media_conn",
                    &[
                        ("auth", s(self.media_auth.clone())),
                        ("ttl", s("21600")),
                        ("auth_ttl", s("21600")),
                        ("max_buckets", s("12")),
                    ],
                    vec![node(
                        "host",
                        &[
                            ("hostname", s(self.media_host.clone())),
                            ("type", s("primary")),
                        ],
                        vec![],
                    )],
                )],
            )),
            ("md", "set", "remove-companion-device") => self.on_remove_companion(conn, &n),
            ("w:g2", _, _) => Some(self.on_group_iq(conn, &n)),
            _ => {
                self.unserved.push(n.clone());
                Some(error(&n, 501, "feature-not-implemented"))
            }
        };
        if let Some(a) = answer {
            self.send(conn, a);
        }
    }
}

/// The account's privacy settings (WhatsApp's defaults).
fn privacy() -> Node {
    let categories = [
        ("last", "all"),
        ("online", "all"),
        ("profile", "all"),
        ("status", "contacts"),
        ("groupadd", "all"),
        ("readreceipts", "all"),
        ("calladd", "all"),
        ("messages", "all"),
        ("defense", "off"),
        ("stickers", "all"),
    ];
    node(
        "privacy",
        &[],
        categories
            .iter()
            .map(|(name, value)| {
                node(
                    "category",
                    &[("name", s(*name)), ("value", s(*value))],
                    vec![],
                )
            })
            .collect(),
    )
}
