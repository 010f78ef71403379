//! Key distribution and user sync, as wacore's IQ specs document them
//! (their module docs quote WA Web's `WAWebUploadPreKeysJob`,
//! `WAWebDigestKeyJob`, `RotateKeyJob` and the USync parsers):
//!
//! - `encrypt`: prekey upload (registration id, key type 5, identity,
//!   one-time keys with 3-byte ids, signed prekey), `<count/>`, `<rotate>`,
//!   `<digest/>` (the SHA-1 over identity ‖ signed key ‖ signature ‖ each
//!   listed one-time key), and `<key><user jid/>` fetches: one bundle per
//!   device, each one-time key handed out once; a companion's bundle carries
//!   its `<device-identity>` (without the account key, as for a contact's
//!   device); a phone's keys come from its Signal store.
//! - `usync`: `devices` (the device list, the ADV signed key-index list),
//!   `lid`, `contact` (`in`/`out` for a phone number), `status`,
//!   `disappearing_mode`, `picture`; others are left out.
//! - `privacy` `<tokens>`: trusted-contact tokens issued for any JID.

use super::router::{error, result};
use super::signal::Bundle;
use super::wire::{self, attr, child, child_bytes, child_uint, children, node, s};
use super::World;
use sha1::{Digest, Sha1};
use wacore::libsignal::protocol::PublicKey;
use wacore_binary::{Jid, Node};
use waproto::buffa::Message as _;
use waproto::whatsapp as wa;

fn id3(id: u32) -> Vec<u8> {
    id.to_be_bytes()[1..].to_vec()
}

fn bundle_children(b: &Bundle) -> Vec<Node> {
    let mut out = vec![
        wire::bytes_node(
            "registration",
            &[],
            b.registration_id.to_be_bytes().to_vec(),
        ),
        wire::bytes_node("type", &[], vec![5]),
        wire::bytes_node("identity", &[], b.identity.to_vec()),
    ];
    if let Some((id, key)) = b.prekey {
        out.push(node(
            "key",
            &[],
            vec![
                wire::bytes_node("id", &[], id3(id)),
                wire::bytes_node("value", &[], key.to_vec()),
            ],
        ));
    }
    out.push(skey_node(
        b.signed_prekey.0,
        &b.signed_prekey.1,
        &b.signed_prekey.2,
    ));
    out
}

fn skey_node(id: u32, key: &[u8; 32], signature: &[u8]) -> Node {
    node(
        "skey",
        &[],
        vec![
            wire::bytes_node("id", &[], id3(id)),
            wire::bytes_node("value", &[], key.to_vec()),
            wire::bytes_node("signature", &[], signature.to_vec()),
        ],
    )
}

fn key32(b: &[u8]) -> Option<[u8; 32]> {
    b.try_into().ok()
}

/// `<skey>`'s (id, key, signature), the signature checked against `identity`.
fn parse_skey(n: &Node, identity: &[u8; 32]) -> Option<(u32, [u8; 32], Vec<u8>)> {
    let id = child_uint(n, "id")?;
    let key = key32(&child_bytes(n, "value")?)?;
    let sig = child_bytes(n, "signature")?;
    let ok = PublicKey::from_djb_public_key_bytes(identity)
        .ok()?
        .verify_signature(
            &PublicKey::from_djb_public_key_bytes(&key).ok()?.serialize(),
            &sig,
        );
    ok.then_some((id, key, sig))
}

impl World {
    pub(crate) fn on_encrypt(&mut self, conn: u64, n: &Node) -> Node {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return error(n, 401, "not-authorized");
        };
        let kind = attr(n, "type").unwrap_or_default();
        let first = n
            .children()
            .and_then(|c| c.first())
            .map(|c| c.tag.to_string());
        match (kind.as_str(), first.as_deref()) {
            ("get", Some("count")) => {
                let count = self
                    .companion_mut(&phone, device)
                    .map_or(0, |c| c.prekeys.len());
                result(
                    n,
                    vec![node("count", &[("value", s(count.to_string()))], vec![])],
                )
            }
            ("get", Some("key")) => {
                let users: Vec<Node> = child(n, "key")
                    .map(|k| children(k, "user").cloned().collect())
                    .unwrap_or_default();
                let list = users
                    .iter()
                    .filter_map(|u| wire::jid_attr(u, "jid"))
                    .map(|j| self.bundle_for(&j))
                    .collect();
                result(n, vec![node("list", &[], list)])
            }
            ("get", Some("digest")) => self.digest(n, &phone, device),
            ("set", Some("rotate")) => {
                let Some(c) = self.companion_mut(&phone, device) else {
                    return error(n, 404, "item-not-found");
                };
                match child(n, "rotate")
                    .and_then(|r| child(r, "skey"))
                    .and_then(|k| parse_skey(k, &c.identity))
                {
                    Some(skey) => {
                        c.signed_prekey = skey;
                        result(n, vec![])
                    }
                    None => error(n, 406, "not-acceptable"),
                }
            }
            ("set", _) => {
                let Some(c) = self.companion_mut(&phone, device) else {
                    return error(n, 404, "item-not-found");
                };
                let identity = child_bytes(n, "identity");
                let reg = child_uint(n, "registration");
                let skey = child(n, "skey").and_then(|k| parse_skey(k, &c.identity));
                if identity.as_deref() != Some(&c.identity[..])
                    || reg != Some(c.registration_id)
                    || child_bytes(n, "type").as_deref() != Some(&[5][..])
                {
                    return error(n, 406, "not-acceptable");
                }
                let Some(skey) = skey else {
                    return error(n, 406, "not-acceptable");
                };
                c.signed_prekey = skey;
                c.low_notified = false;
                for k in child(n, "list")
                    .map(|l| children(l, "key"))
                    .into_iter()
                    .flatten()
                {
                    if let (Some(id), Some(v)) = (
                        child_uint(k, "id"),
                        child_bytes(k, "value").and_then(|v| key32(&v)),
                    ) {
                        c.prekeys.insert(id, v);
                        c.uploaded += 1;
                    }
                }
                result(n, vec![])
            }
            _ => {
                self.unserved.push(n.clone());
                error(n, 501, "feature-not-implemented")
            }
        }
    }

    /// One `<user>` of a key fetch.
    fn bundle_for(&mut self, jid: &Jid) -> Node {
        let attrs = [("jid", wire::j(jid))];
        let missing = || {
            node(
                "user",
                &attrs,
                vec![node(
                    "error",
                    &[("code", s("404")), ("text", s("item-not-found"))],
                    vec![],
                )],
            )
        };
        let Some(phone) = self.phone_of(jid) else {
            return missing();
        };
        let a = self.account_mut(&phone);
        if jid.device == 0 {
            let b = a.signal.bundle();
            return node("user", &attrs, bundle_children(&b));
        }
        let Some(c) = a.companions.get_mut(&jid.device).filter(|c| !c.removed) else {
            return missing();
        };
        let prekey = c.prekeys.pop_first();
        let device = c.device;
        let b = Bundle {
            registration_id: c.registration_id,
            identity: c.identity,
            prekey,
            signed_prekey: c.signed_prekey.clone(),
        };
        let mut kids = bundle_children(&b);
        // As for any contact's device: the account key is left out, the
        // fetcher has it.
        if let Ok(mut id) = wa::ADVSignedDeviceIdentity::decode_from_slice(&c.signed_identity) {
            id.account_signature_key = None;
            kids.push(wire::bytes_node("device-identity", &[], id.encode_to_vec()));
        }
        let user = node("user", &attrs, kids);
        self.check_prekeys(&phone, device);
        user
    }

    /// Below five one-time prekeys, the server tells the device
    /// (`<notification type="encrypt"><count value/>`), once per upload.
    pub(crate) fn check_prekeys(&mut self, phone: &str, device: u16) {
        let Some(c) = self.companion_mut(phone, device) else {
            return;
        };
        if c.prekeys.len() >= 5 || c.low_notified || c.uploaded == 0 {
            return;
        }
        c.low_notified = true;
        let count = c.prekeys.len();
        let id = self.new_id();
        let n = node(
            "notification",
            &[
                ("from", s(wire::SERVER)),
                ("type", s("encrypt")),
                ("id", s(id)),
                ("t", s(super::noise::now_secs().to_string())),
            ],
            vec![node("count", &[("value", s(count.to_string()))], vec![])],
        );
        self.enqueue(phone, device, n);
    }

    fn digest(&mut self, n: &Node, phone: &str, device: u16) -> Node {
        let Some(c) = self.companion_mut(phone, device) else {
            return error(n, 404, "item-not-found");
        };
        if c.uploaded == 0 {
            return error(n, 404, "item-not-found");
        }
        let mut h = Sha1::new();
        h.update(c.identity);
        h.update(c.signed_prekey.1);
        h.update(&c.signed_prekey.2);
        for key in c.prekeys.values() {
            h.update(key);
        }
        let hash = h.finalize().to_vec();
        let ids = c
            .prekeys
            .keys()
            .map(|id| wire::bytes_node("id", &[], id3(*id)))
            .collect();
        result(
            n,
            vec![node(
                "digest",
                &[],
                vec![
                    wire::bytes_node(
                        "registration",
                        &[],
                        c.registration_id.to_be_bytes().to_vec(),
                    ),
                    wire::bytes_node("type", &[], vec![5]),
                    wire::bytes_node("identity", &[], c.identity.to_vec()),
                    skey_node(c.signed_prekey.0, &c.signed_prekey.1, &c.signed_prekey.2),
                    node("list", &[], ids),
                    wire::bytes_node("hash", &[], hash),
                ],
            )],
        )
    }

    pub(crate) fn on_usync(&mut self, _conn: u64, n: &Node) -> Node {
        let Some(usync) = child(n, "usync") else {
            return error(n, 400, "bad-request");
        };
        let protocols: Vec<String> = child(usync, "query")
            .and_then(|q| q.children())
            .map(|c| c.iter().map(|p| p.tag.to_string()).collect())
            .unwrap_or_default();
        let users: Vec<Node> = child(usync, "list")
            .map(|l| children(l, "user").cloned().collect())
            .unwrap_or_default();
        let list = users
            .iter()
            .map(|u| self.usync_user(u, &protocols))
            .collect();
        let mut attrs = Vec::new();
        for k in ["sid", "mode", "context"] {
            if let Some(v) = attr(usync, k) {
                attrs.push((k, s(v)));
            }
        }
        attrs.push(("index", s("0")));
        attrs.push(("last", s("true")));
        let results = protocols.iter().map(|p| node(p, &[], vec![])).collect();
        result(
            n,
            vec![node(
                "usync",
                &attrs,
                vec![node("result", &[], results), node("list", &[], list)],
            )],
        )
    }

    fn usync_user(&mut self, u: &Node, protocols: &[String]) -> Node {
        // By JID, or by phone number (`<contact>+1…</contact>`).
        let by_number = child(u, "contact")
            .and_then(wire::content_bytes)
            .map(|b| String::from_utf8_lossy(b).to_string());
        let jid = wire::jid_attr(u, "jid").or_else(|| {
            by_number
                .as_deref()
                .map(|num| Jid::pn(num.trim_start_matches('+').to_string()))
        });
        let Some(jid) = jid else {
            return node("user", &[], vec![]);
        };
        let phone = self.phone_of(&jid);
        let mut out = Vec::new();
        for p in protocols {
            let kid = match (p.as_str(), phone.as_deref()) {
                ("devices", Some(phone)) => self.devices_node(phone),
                ("lid", Some(phone)) => node(
                    "lid",
                    &[("val", wire::j(&self.account(phone).lid_jid()))],
                    vec![],
                ),
                ("lid", None) => node("lid", &[], vec![]),
                ("contact", found) => {
                    let mut c = node(
                        "contact",
                        &[("type", s(if found.is_some() { "in" } else { "out" }))],
                        vec![],
                    );
                    if let Some(num) = &by_number {
                        c.content =
                            Some(wacore_binary::NodeContent::Bytes(num.clone().into_bytes()));
                    }
                    c
                }
                ("status", Some(_)) => wire::bytes_node(
                    "status",
                    &[("t", s(super::noise::now_secs().to_string()))],
                    b"Hey there! I am using WhatsApp.".to_vec(),
                ),
                ("disappearing_mode", Some(_)) => node(
                    "disappearing_mode",
                    &[("duration", s("0")), ("t", s("0"))],
                    vec![],
                ),
                (_, None) => node(
                    p,
                    &[],
                    vec![node(
                        "error",
                        &[("code", s("404")), ("text", s("item-not-found"))],
                        vec![],
                    )],
                ),
                _ => continue,
            };
            out.push(kid);
        }
        let mut attrs = vec![("jid", wire::j(&jid.to_non_ad()))];
        if jid.server == wacore_binary::Server::Lid {
            if let Some(phone) = &phone {
                attrs.push(("pn_jid", wire::j(&Jid::pn(phone.clone()))));
            }
        }
        node("user", &attrs, out)
    }

    /// `<devices>`: the account's devices and its signed key-index list.
    fn devices_node(&self, phone: &str) -> Node {
        let a = self.account(phone);
        let live: Vec<&super::Companion> = a.companions.values().filter(|c| !c.removed).collect();
        let mut list = vec![node("device", &[("id", s("0"))], vec![])];
        for c in &live {
            list.push(node(
                "device",
                &[
                    ("id", s(c.device.to_string())),
                    ("key-index", s(c.key_index.to_string())),
                ],
                vec![],
            ));
        }
        let ts = super::noise::now_secs();
        let details = wa::ADVKeyIndexList {
            raw_id: Some(a.adv_raw_id),
            timestamp: Some(ts),
            current_index: Some(a.next_key_index - 1),
            valid_indexes: live.iter().map(|c| c.key_index).collect(),
            account_type: Some(wa::ADVEncryptionType::E2EE),
        }
        .encode_to_vec();
        let signature = a
            .signal
            .identity
            .private_key()
            .calculate_signature(&[&[6u8, 2][..], &details].concat(), &mut rand::rng())
            .expect("key index signature")
            .to_vec();
        let signed = wa::ADVSignedKeyIndexList {
            details: Some(details),
            account_signature: Some(signature),
            account_signature_key: None,
        }
        .encode_to_vec();
        node(
            "devices",
            &[],
            vec![
                node("device-list", &[], list),
                wire::bytes_node("key-index-list", &[("ts", s(ts.to_string()))], signed),
            ],
        )
    }

    pub(crate) fn on_tokens(&mut self, n: &Node) -> Node {
        let tokens: Vec<Node> = child(n, "tokens")
            .map(|t| children(t, "token").cloned().collect())
            .unwrap_or_default();
        let issued = tokens
            .iter()
            .map(|t| {
                let mut attrs = Vec::new();
                for k in ["jid", "t", "type"] {
                    if let Some(v) = attr(t, k) {
                        attrs.push((k, s(v)));
                    }
                }
                let token: [u8; 16] = rand::RngExt::random(&mut rand::rng());
                wire::bytes_node("token", &attrs, token.to_vec())
            })
            .collect();
        result(n, vec![node("tokens", &[], issued)])
    }
}
