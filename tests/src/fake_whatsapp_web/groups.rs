//! Groups with sender keys (the WhatsApp security whitepaper, "Transmitting
//! Messages to Groups"; the client's `send_group_branch` and group receive
//! path; wacore's `w:g2` specs, which quote WA Web's group parsers):
//!
//! - A group is `{id}@g.us` with participants addressed by phone number
//!   (`addressing_mode="pn"`), each with its LID. `<iq xmlns="w:g2"
//!   type="get"><query request="interactive"/>` answers its `<group>`;
//!   `<participating>` lists an account's groups. Members' linked devices
//!   learn of a new group through a `w:gp2` `<create>` notification.
//! - A phone's group message: its sender key's distribution message goes
//!   pairwise (`pkmsg`/`msg`) to each member device that lacks it, the
//!   message itself once as `skmsg`; each member device gets one stanza
//!   `from` the group with `participant` the sender.
//! - A device's group message: `<participants>` carries the distribution
//!   message pairwise, `<enc type="skmsg">` the message. Phones take the
//!   sender key and decrypt; other member devices get both forwarded. The
//!   server acks and each member's phone sends a delivery receipt.

use super::messages::{device_address, enc_bytes};
use super::receipts::ChatState;
use super::router::{error, result};
use super::signal::pad;
use super::wire::{self, attr, child, children, node, s};
use super::{FakeWhatsAppWeb, World};
use rand::RngExt as _;
use std::collections::HashSet;
use wacore::libsignal::protocol::SenderKeyName;
use wacore_binary::{Jid, Node};
use waproto::buffa::{Message as _, MessageField};
use waproto::whatsapp as wa;

pub(crate) struct Group {
    pub id: String,
    pub subject: String,
    pub owner: String,
    pub participants: Vec<String>,
    pub created: u64,
    pub chatstates: Vec<ChatState>,
    /// (sender phone, member phone, member device) that have the sender's key.
    pub has_key: HashSet<(String, String, u16)>,
}

impl Group {
    pub fn jid(&self) -> Jid {
        Jid::group(self.id.clone())
    }
}

fn sender_key_name(group: &Jid, lid: &str, device: u16) -> SenderKeyName {
    SenderKeyName::new(
        group.to_string(),
        device_address(lid, device).as_str().to_string(),
    )
}

impl World {
    fn group_node(&self, g: &Group) -> Node {
        let owner = self.account(&g.owner).pn();
        let participants = g
            .participants
            .iter()
            .map(|p| {
                let a = self.account(p);
                let mut attrs = vec![("jid", wire::j(&a.pn())), ("lid", wire::j(&a.lid_jid()))];
                if *p == g.owner {
                    attrs.push(("type", s("superadmin")));
                }
                node("participant", &attrs, vec![])
            })
            .collect();
        node(
            "group",
            &[
                ("id", s(g.id.clone())),
                ("subject", s(g.subject.clone())),
                ("s_t", s(g.created.to_string())),
                ("s_o", wire::j(&owner)),
                ("creator", wire::j(&owner)),
                ("creation", s(g.created.to_string())),
                ("size", s(g.participants.len().to_string())),
                ("addressing_mode", s("pn")),
            ],
            participants,
        )
    }

    pub(crate) fn on_group_iq(&mut self, conn: u64, n: &Node) -> Node {
        let Some((phone, _)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return error(n, 401, "not-authorized");
        };
        let first = n
            .children()
            .and_then(|c| c.first())
            .map(|c| c.tag.to_string());
        match first.as_deref() {
            Some("query") => {
                let to = wire::jid_attr(n, "to")
                    .map(|j| j.user.to_string())
                    .unwrap_or_default();
                match self.groups.get(&to) {
                    Some(g) if g.participants.contains(&phone) => {
                        let mut r = result(n, vec![self.group_node(g)]);
                        r.attrs.insert("from", wire::j(&g.jid()));
                        r
                    }
                    Some(_) => error(n, 403, "forbidden"),
                    None => error(n, 404, "item-not-found"),
                }
            }
            Some("participating") => {
                let groups = self
                    .groups
                    .values()
                    .filter(|g| g.participants.contains(&phone))
                    .map(|g| self.group_node(g))
                    .collect();
                result(n, vec![node("groups", &[], groups)])
            }
            _ => {
                self.unserved.push(n.clone());
                error(n, 501, "feature-not-implemented")
            }
        }
    }

    /// `target`'s phone takes a member device's sender key for `group`.
    pub(crate) fn take_sender_key(
        &mut self,
        target: &str,
        group: &Jid,
        sender: &str,
        device: u16,
        skdm: &[u8],
    ) {
        let name = sender_key_name(group, &self.account(sender).lid.clone(), device);
        if let Err(e) = self
            .account_mut(target)
            .signal
            .process_distribution(&name, skdm)
        {
            eprintln!("[fake-wa] {target}'s phone cannot take the sender key: {e}");
        }
    }

    /// A device's message to a group.
    pub(crate) fn on_group_message(
        &mut self,
        conn: u64,
        phone: &str,
        device: u16,
        n: &Node,
        to: &Jid,
    ) {
        let id = attr(n, "id").unwrap_or_default();
        let now = super::noise::now_secs().to_string();
        let Some(members) = self
            .groups
            .get(to.user.as_str())
            .map(|g| g.participants.clone())
            .filter(|m| m.iter().any(|p| p == phone))
        else {
            let ack = node(
                "ack",
                &[
                    ("class", s("message")),
                    ("id", s(id)),
                    ("from", wire::j(to)),
                    ("error", s("403")),
                ],
                vec![],
            );
            self.send(conn, ack);
            return;
        };
        let sender = wire::pn(phone, device);
        let sender_lid = self.account(phone).lid.clone();
        let skmsg = children(n, "enc")
            .find(|e| attr(e, "type").as_deref() == Some("skmsg"))
            .cloned();
        // Pairwise parts: phones take the key; devices' parts wait for them.
        let mut pairwise: Vec<(String, u16, Node)> = Vec::new();
        for t in child(n, "participants")
            .map(|p| children(p, "to").cloned().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let (Some(jid), Some(enc)) = (wire::jid_attr(&t, "jid"), child(&t, "enc").cloned())
            else {
                continue;
            };
            let Some(target) = self.phone_of(&jid) else {
                continue;
            };
            if jid.device == 0 {
                let single = node(
                    "message",
                    &[("id", s(id.clone()))],
                    vec![node("participants", &[], vec![t.clone()])],
                );
                self.fan_out(phone, device, &single, to, Some(to));
            } else {
                pairwise.push((target, jid.device, enc));
            }
        }
        let identity = child(n, "device-identity").cloned();
        let kind = attr(n, "type").unwrap_or_else(|| "text".into());
        for member in &members {
            let devices: Vec<u16> = self
                .account(member)
                .companions
                .values()
                .filter(|c| !(c.removed || member == phone && c.device == device))
                .map(|c| c.device)
                .collect();
            for d in devices {
                let mut kids = Vec::new();
                if let Some((_, _, enc)) = pairwise.iter().find(|(p, x, _)| p == member && *x == d)
                {
                    let pk = attr(enc, "type").as_deref() == Some("pkmsg");
                    kids.push(enc.clone());
                    if pk {
                        kids.extend(identity.clone());
                    }
                }
                kids.extend(skmsg.clone());
                let stanza = node(
                    "message",
                    &[
                        ("from", wire::j(to)),
                        ("participant", wire::j(&sender)),
                        ("participant_lid", wire::j(&wire::lid(&sender_lid, device))),
                        ("addressing_mode", s("pn")),
                        ("id", s(id.clone())),
                        ("t", s(now.clone())),
                        ("type", s(kind.clone())),
                    ],
                    kids,
                );
                self.enqueue(member, d, stanza);
            }
        }
        // Member phones decrypt the message itself.
        if let Some(skmsg) = &skmsg {
            let ct = enc_bytes(skmsg);
            let name = sender_key_name(to, &sender_lid, device);
            for member in members.iter().filter(|m| *m != phone) {
                let opened = self
                    .account_mut(member)
                    .signal
                    .group_decrypt(&name, &ct)
                    .map_err(|e| e.to_string())
                    .and_then(super::signal::unpad)
                    .and_then(|p| wa::Message::decode_from_slice(&p).map_err(|e| e.to_string()));
                match opened {
                    Ok(m) => {
                        if let Some(r) = self.decode_received(&id, &sender, to, "skmsg", m) {
                            self.account_mut(member).received.push(r);
                        }
                    }
                    Err(e) => {
                        eprintln!("[fake-wa] {member}'s phone cannot open group message {id}: {e}")
                    }
                }
            }
        }
        let ack = node(
            "ack",
            &[
                ("class", s("message")),
                ("id", s(id.clone())),
                ("from", wire::j(to)),
                ("t", s(now.clone())),
            ],
            vec![],
        );
        self.send(conn, ack);
        for member in members.iter().filter(|m| *m != phone) {
            let pn = self.account(member).pn();
            let receipt = node(
                "receipt",
                &[
                    ("from", wire::j(to)),
                    ("participant", wire::j(&pn)),
                    ("id", s(id.clone())),
                    ("t", s(now.clone())),
                ],
                vec![],
            );
            self.enqueue(phone, device, receipt);
        }
    }

    /// `from`'s phone sends `message` to group `group_id`.
    fn send_group_from_phone(
        &mut self,
        from: &str,
        group_id: &str,
        id: &str,
        message: &wa::Message,
    ) {
        let Some(g) = self.groups.get(group_id) else {
            panic!("no group {group_id}");
        };
        let (gjid, members) = (g.jid(), g.participants.clone());
        let (from_pn, from_lid, name) = {
            let a = self.account(from);
            (a.pn(), a.lid.clone(), a.push_name.clone())
        };
        let key_name = sender_key_name(&gjid, &from_lid, 0);
        let skdm = self
            .account_mut(from)
            .signal
            .sender_key_distribution(&key_name)
            .expect("sender key");
        let ct = self
            .account_mut(from)
            .signal
            .group_encrypt(&key_name, &pad(message.encode_to_vec()))
            .expect("group encrypt");
        let distribution = pad(wa::Message {
            sender_key_distribution_message: MessageField::some(
                wa::message::SenderKeyDistributionMessage {
                    group_id: Some(gjid.to_string()),
                    axolotl_sender_key_distribution_message: Some(skdm),
                },
            ),
            ..Default::default()
        }
        .encode_to_vec());
        let now = super::noise::now_secs().to_string();
        let mediatype = None::<&str>;
        for member in &members {
            let devices: Vec<u16> = self
                .account(member)
                .companions
                .values()
                .filter(|c| !c.removed)
                .map(|c| c.device)
                .collect();
            for d in devices {
                let mut kids = Vec::new();
                let key = (from.to_string(), member.clone(), d);
                if !self.groups[group_id].has_key.contains(&key) {
                    if let Some((kind, pct)) =
                        self.encrypt_for_device(from, member, d, &distribution)
                    {
                        kids.push(wire::bytes_node(
                            "enc",
                            &[("v", s("2")), ("type", s(kind))],
                            pct,
                        ));
                        if let Some(g) = self.groups.get_mut(group_id) {
                            g.has_key.insert(key);
                        }
                    }
                }
                let mut attrs = vec![("v", s("2")), ("type", s("skmsg"))];
                if let Some(m) = mediatype {
                    attrs.push(("mediatype", s(m)));
                }
                kids.push(wire::bytes_node("enc", &attrs, ct.clone()));
                let stanza = node(
                    "message",
                    &[
                        ("from", wire::j(&gjid)),
                        ("participant", wire::j(&from_pn)),
                        ("participant_lid", wire::j(&wire::lid(&from_lid, 0))),
                        ("addressing_mode", s("pn")),
                        ("id", s(id)),
                        ("t", s(now.clone())),
                        ("type", s("text")),
                        ("notify", s(name.clone())),
                    ],
                    kids,
                );
                self.enqueue(member, d, stanza);
            }
        }
    }
}

impl FakeWhatsAppWeb {
    /// `owner` creates a group named `subject` with `participants` (phone
    /// numbers; the owner is added); its JID (`{id}@g.us`).
    pub fn create_group(&self, owner: &str, subject: &str, participants: &[&str]) -> String {
        let mut w = self.shared.lock();
        let mut members = vec![owner.to_string()];
        for p in participants {
            assert!(w.accounts.contains_key(*p), "no account {p}");
            if !members.iter().any(|m| m == p) {
                members.push(p.to_string());
            }
        }
        let id = format!(
            "120363{:012}",
            rand::rng().random_range(0..1_000_000_000_000u64)
        );
        let created = super::noise::now_secs();
        let g = Group {
            id: id.clone(),
            subject: subject.to_string(),
            owner: owner.to_string(),
            participants: members.clone(),
            created,
            chatstates: Vec::new(),
            has_key: HashSet::new(),
        };
        let group_node = w.group_node(&g);
        let gjid = g.jid();
        w.groups.insert(id, g);
        let owner_pn = w.account(owner).pn();
        for m in &members {
            let devices: Vec<u16> = w
                .account(m)
                .companions
                .values()
                .filter(|c| !c.removed)
                .map(|c| c.device)
                .collect();
            for d in devices {
                let nid = w.new_id();
                let notification = node(
                    "notification",
                    &[
                        ("from", wire::j(&gjid)),
                        ("type", s("w:gp2")),
                        ("id", s(nid)),
                        ("participant", wire::j(&owner_pn)),
                        ("t", s(created.to_string())),
                    ],
                    vec![node("create", &[], vec![group_node.clone()])],
                );
                w.enqueue(m, d, notification);
            }
        }
        gjid.to_string()
    }

    /// `from`'s phone sends `text` to `group` (its JID), mentioning
    /// `mentions` (phone numbers).
    pub fn send_group_text(
        &self,
        from: &str,
        group: &str,
        text: &str,
        mentions: &[&str],
    ) -> String {
        let mentioned: Vec<String> = mentions
            .iter()
            .map(|p| Jid::pn(p.to_string()).to_string())
            .collect();
        let m = self.text_with_mentions(text, &mentioned);
        let mut w = self.shared.lock();
        let id = w.new_id();
        let group_id = group.split('@').next().unwrap_or(group).to_string();
        w.send_group_from_phone(from, &group_id, &id, &m);
        id
    }

    /// Chat states linked devices sent to `group`.
    pub fn group_chatstates(&self, group: &str) -> Vec<ChatState> {
        let id = group.split('@').next().unwrap_or(group);
        self.shared
            .lock()
            .groups
            .get(id)
            .map(|g| g.chatstates.clone())
            .unwrap_or_default()
    }
}
