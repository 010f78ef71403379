//! One-to-one messages between the simulated phones and the linked devices,
//! end to end (Signal sessions, [`super::signal`]) the way the server fans
//! them out (whatsmeow's and Baileys' receive paths, the client's
//! `message/receive.rs` and `send/` for what it reads and writes):
//!
//! - From a phone: one `<message from sender_lid id t type notify>` per
//!   linked device of the recipient, each with its own `<enc v="2"
//!   type="pkmsg|msg" [mediatype]>` (a session starts from the device's
//!   uploaded bundle, one-time prekey consumed). The sender's own linked
//!   devices get a `DeviceSentMessage` copy with `recipient`.
//! - From a device: `<message to id type><participants><to jid><enc/>…`
//!   (plus `<device-identity>` with a `pkmsg`), or one bare `<enc>` for
//!   the device `to` names. Each `<to>` is a device:
//!   a phone decrypts its copy, another linked device gets the ciphertext
//!   forwarded as its own stanza. The server acks (`<ack class="message">`)
//!   and the recipient's phone sends the delivery receipt.
//!
//! What a phone received is decoded (text, quote, mentions) and its media
//! fetched from the CDN, checked against the message's hashes and MAC and
//! decrypted ([`super::media`]).

use super::media::{self, Kind};
use super::signal::{pad, unpad, Bundle};
use super::wire::{self, attr, child, children, node, s};
use super::{FakeWhatsAppWeb, World};
use wacore::libsignal::protocol::{DeviceId, ProtocolAddress};
use wacore_binary::{Jid, Node, NodeContent, Server};
use waproto::buffa::{Message as _, MessageField};
use waproto::whatsapp as wa;

/// A message a phone received from a linked device.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub id: String,
    /// The sending device (`{phone}:{device}@s.whatsapp.net`).
    pub from: String,
    /// The chat as the stanza named it (`to`): a user or a group JID.
    pub chat: String,
    pub text: Option<String>,
    /// The quoted message's id and author (`ContextInfo`).
    pub quoted_id: Option<String>,
    pub quoted_participant: Option<String>,
    pub mentions: Vec<String>,
    pub media: Option<Media>,
    /// Why the media could not be fetched or checked, if it could not.
    pub media_error: Option<String>,
    /// The stanza's `<enc type>` for this phone.
    pub enc: String,
    pub message: Box<wa::Message>,
}

/// Media a message carried, downloaded and decrypted.
#[derive(Debug, Clone, PartialEq)]
pub struct Media {
    /// `image`, `audio`, `video` or `document`.
    pub kind: String,
    pub mimetype: String,
    pub caption: Option<String>,
    /// Audio sent as a voice note.
    pub ptt: bool,
    pub bytes: Vec<u8>,
}

/// The Signal address a phone keeps a linked device's session under.
pub(crate) fn device_address(lid: &str, device: u16) -> ProtocolAddress {
    ProtocolAddress::new(&format!("{lid}@lid"), DeviceId::from(u32::from(device)))
}

pub(crate) fn enc_node(kind: &str, ct: Vec<u8>, mediatype: Option<&str>) -> Node {
    let mut attrs = vec![("v", s("2")), ("type", s(kind))];
    if let Some(m) = mediatype {
        attrs.push(("mediatype", s(m)));
    }
    wire::bytes_node("enc", &attrs, ct)
}

/// The stanza `type` and `<enc mediatype>` of a message.
pub(crate) fn kinds(m: &wa::Message) -> (&'static str, Option<&'static str>) {
    if m.image_message.is_set() {
        ("media", Some("image"))
    } else if let Some(a) = m.audio_message.as_option() {
        (
            "media",
            Some(if a.ptt == Some(true) { "ptt" } else { "audio" }),
        )
    } else if m.video_message.is_set() {
        ("media", Some("video"))
    } else if m.document_message.is_set() {
        ("media", Some("document"))
    } else {
        ("text", None)
    }
}

fn context_of(m: &wa::Message) -> Option<&wa::ContextInfo> {
    m.extended_text_message
        .as_option()
        .and_then(|x| x.context_info.as_option())
        .or_else(|| {
            m.image_message
                .as_option()
                .and_then(|x| x.context_info.as_option())
        })
        .or_else(|| {
            m.audio_message
                .as_option()
                .and_then(|x| x.context_info.as_option())
        })
        .or_else(|| {
            m.video_message
                .as_option()
                .and_then(|x| x.context_info.as_option())
        })
        .or_else(|| {
            m.document_message
                .as_option()
                .and_then(|x| x.context_info.as_option())
        })
}

impl World {
    /// Encrypts `plain` (padded already) from `from`'s phone for `to`'s
    /// linked device, starting a session from its bundle when there is none.
    pub(crate) fn encrypt_for_device(
        &mut self,
        from: &str,
        to: &str,
        device: u16,
        plain: &[u8],
    ) -> Option<(&'static str, Vec<u8>)> {
        let (addr, bundle) = {
            let a = self.account_mut(to);
            let addr = device_address(&a.lid, device);
            let c = a.companions.get_mut(&device).filter(|c| !c.removed)?;
            let bundle = Bundle {
                registration_id: c.registration_id,
                identity: c.identity,
                prekey: None,
                signed_prekey: c.signed_prekey.clone(),
            };
            (addr, bundle)
        };
        let sender = self.account_mut(from);
        if !sender.signal.has_session(&addr) {
            // A fresh session takes one of the device's one-time prekeys, as
            // a fetch from the server would hand out.
            let prekey = self
                .companion_mut(to, device)
                .and_then(|c| c.prekeys.pop_first());
            self.check_prekeys(to, device);
            let bundle = Bundle { prekey, ..bundle };
            let sender = self.account_mut(from);
            if let Err(e) = sender.signal.start_session(&addr, &bundle) {
                eprintln!("[fake-wa] no session with {to}:{device}: {e}");
                return None;
            }
        }
        match self.account_mut(from).signal.encrypt(&addr, plain) {
            Ok(x) => Some(x),
            Err(e) => {
                eprintln!("[fake-wa] encrypt for {to}:{device}: {e}");
                None
            }
        }
    }

    /// `from`'s phone sends `message` to `to`: to every linked device of
    /// `to`, and as a sent-message copy to `from`'s own linked devices.
    pub(crate) fn send_from_phone(
        &mut self,
        from: &str,
        to: &str,
        id: &str,
        message: &wa::Message,
    ) {
        let (stanza_type, mediatype) = kinds(message);
        let now = super::noise::now_secs().to_string();
        let (from_pn, from_lid, name) = {
            let a = self.account(from);
            (a.pn(), a.lid_jid(), a.push_name.clone())
        };
        let plain = pad(message.encode_to_vec());
        let devices: Vec<u16> = self
            .account(to)
            .companions
            .values()
            .filter(|c| !c.removed)
            .map(|c| c.device)
            .collect();
        self.account_mut(from)
            .sent
            .insert(id.to_string(), (to.to_string(), message.clone()));
        for device in devices {
            let Some((kind, mut ct)) = self.encrypt_for_device(from, to, device, &plain) else {
                continue;
            };
            if kind == "msg" && std::mem::take(&mut self.account_mut(from).garble_next) {
                // The message's MAC (its last 8 bytes) no longer holds.
                if let Some(b) = ct.last_mut() {
                    *b ^= 0xff;
                }
            }
            let stanza = node(
                "message",
                &[
                    ("from", wire::j(&from_pn)),
                    ("sender_lid", wire::j(&from_lid)),
                    ("id", s(id)),
                    ("t", s(now.clone())),
                    ("type", s(stanza_type)),
                    ("notify", s(name.clone())),
                ],
                vec![enc_node(kind, ct, mediatype)],
            );
            self.enqueue(to, device, stanza);
        }
        // The sender's own linked devices see what the phone sent.
        let to_pn = self.account(to).pn();
        let dsm = wa::Message {
            device_sent_message: MessageField::some(wa::message::DeviceSentMessage {
                destination_jid: Some(to_pn.to_string()),
                message: MessageField::some(message.clone()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let plain = pad(dsm.encode_to_vec());
        let own: Vec<u16> = self
            .account(from)
            .companions
            .values()
            .filter(|c| !c.removed)
            .map(|c| c.device)
            .collect();
        for device in own {
            let Some((kind, ct)) = self.encrypt_for_device(from, from, device, &plain) else {
                continue;
            };
            let stanza = node(
                "message",
                &[
                    ("from", wire::j(&from_pn)),
                    ("recipient", wire::j(&to_pn)),
                    ("id", s(id)),
                    ("t", s(now.clone())),
                    ("type", s(stanza_type)),
                ],
                vec![enc_node(kind, ct, mediatype)],
            );
            self.enqueue(from, device, stanza);
        }
    }

    /// A `<message>` from the device on `conn`.
    pub(crate) fn on_message(&mut self, conn: u64, n: &Node) {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return;
        };
        let id = attr(n, "id").unwrap_or_default();
        let Some(to) = wire::jid_attr(n, "to") else {
            return;
        };
        let now = super::noise::now_secs().to_string();
        if to.server == Server::Group {
            self.on_group_message(conn, &phone, device, n, &to);
        } else {
            self.fan_out(&phone, device, n, &to, None);
            let ack = node(
                "ack",
                &[
                    ("class", s("message")),
                    ("id", s(id.clone())),
                    ("from", wire::j(&to)),
                    ("t", s(now.clone())),
                ],
                vec![],
            );
            self.send(conn, ack);
            // The recipient's phone got it.
            if let Some(peer) = self.phone_of(&to).filter(|p| *p != phone) {
                let peer_pn = self.account(&peer).pn();
                let receipt = node(
                    "receipt",
                    &[("from", wire::j(&peer_pn)), ("id", s(id)), ("t", s(now))],
                    vec![],
                );
                self.enqueue(&phone, device, receipt);
            }
        }
    }

    /// Delivers each `<participants><to>` of a device's stanza: phones
    /// decrypt theirs, other linked devices get it forwarded. `group` is the
    /// group's JID for a group message.
    pub(crate) fn fan_out(
        &mut self,
        phone: &str,
        device: u16,
        n: &Node,
        to: &Jid,
        group: Option<&Jid>,
    ) {
        let id = attr(n, "id").unwrap_or_default();
        let sender = wire::pn(phone, device);
        let sender_lid = self.account(phone).lid.clone();
        let identity = child(n, "device-identity").cloned();
        let mut targets: Vec<Node> = child(n, "participants")
            .map(|p| children(p, "to").cloned().collect())
            .unwrap_or_default();
        // A single device may be addressed with a bare `<enc>` (peer
        // messages to the own phone): the stanza's `to` is that device.
        if targets.is_empty() && group.is_none() {
            if let Some(enc) =
                children(n, "enc").find(|e| attr(e, "type").as_deref() != Some("skmsg"))
            {
                targets.push(node("to", &[("jid", wire::j(to))], vec![enc.clone()]));
            }
        }
        for t in targets {
            let (Some(jid), Some(enc)) = (wire::jid_attr(&t, "jid"), child(&t, "enc").cloned())
            else {
                continue;
            };
            let Some(target) = self.phone_of(&jid) else {
                continue;
            };
            let kind = attr(&enc, "type").unwrap_or_default();
            if jid.device == 0 {
                let ct = wire::content_bytes(&enc).unwrap_or_default().to_vec();
                let addr = device_address(&sender_lid, device);
                let plain = self
                    .account_mut(&target)
                    .signal
                    .decrypt(&addr, &kind, &ct)
                    .map_err(|e| e.to_string())
                    .and_then(unpad);
                match plain
                    .and_then(|p| wa::Message::decode_from_slice(&p).map_err(|e| e.to_string()))
                {
                    Ok(m) => self.phone_received(&target, phone, &sender, &id, to, group, &kind, m),
                    Err(e) => eprintln!("[fake-wa] {target}'s phone cannot open {id}: {e}"),
                }
                continue;
            }
            // Another linked device: the ciphertext goes on as its own stanza.
            let mut attrs = vec![("from", wire::j(&sender)), ("id", s(id.clone()))];
            if let Some(g) = group {
                attrs[0] = ("from", wire::j(g));
                attrs.push(("participant", wire::j(&sender)));
            } else if target == phone {
                attrs.push(("recipient", wire::j(to)));
            }
            for k in ["t", "type", "edit"] {
                if let Some(v) = attr(n, k) {
                    attrs.push((k, s(v)));
                }
            }
            if attr(n, "t").is_none() {
                attrs.push(("t", s(super::noise::now_secs().to_string())));
            }
            let mut kids = vec![enc];
            if kind == "pkmsg" {
                kids.extend(identity.clone());
            }
            let stanza = node("message", &attrs, kids);
            self.enqueue(&target, jid.device, stanza);
        }
    }

    /// `target`'s phone opened a message from `phone`'s device `sender`.
    #[allow(clippy::too_many_arguments)]
    fn phone_received(
        &mut self,
        target: &str,
        phone: &str,
        sender: &Jid,
        id: &str,
        to: &Jid,
        group: Option<&Jid>,
        enc: &str,
        m: wa::Message,
    ) {
        if let Some(skdm) = m.sender_key_distribution_message.as_option() {
            if let (Some(g), Some(bytes)) = (
                group,
                skdm.axolotl_sender_key_distribution_message.as_deref(),
            ) {
                self.take_sender_key(target, g, phone, sender.device, bytes);
            }
        }
        // The phone's own copy of what its device sent.
        if target == phone {
            return;
        }
        let r = self.decode_received(id, sender, group.unwrap_or(to), enc, m);
        if let Some(r) = r {
            self.account_mut(target).received.push(r);
        }
    }

    /// What a phone keeps of a message: anything but a bare sender-key
    /// distribution (reactions, edits and the like with `text: None`).
    pub(crate) fn decode_received(
        &mut self,
        id: &str,
        sender: &Jid,
        chat: &Jid,
        enc: &str,
        m: wa::Message,
    ) -> Option<Received> {
        let text = m.conversation.clone().or_else(|| {
            m.extended_text_message
                .as_option()
                .and_then(|x| x.text.clone())
        });
        let ctx = context_of(&m);
        let (media, media_error) = match self.fetch_media(&m) {
            None => (None, None),
            Some(Ok(x)) => (Some(x), None),
            Some(Err(e)) => (None, Some(e)),
        };
        // A sender key's distribution alone is no message to keep.
        let mut content = m.clone();
        content.sender_key_distribution_message = MessageField::none();
        content.message_context_info = MessageField::none();
        if content == wa::Message::default() {
            return None;
        }
        Some(Received {
            id: id.to_string(),
            from: sender.to_string(),
            chat: chat.to_string(),
            text,
            quoted_id: ctx.and_then(|c| c.stanza_id.clone()),
            quoted_participant: ctx.and_then(|c| c.participant.clone()),
            mentions: ctx.map(|c| c.mentioned_jid.clone()).unwrap_or_default(),
            media,
            media_error,
            enc: enc.to_string(),
            message: Box::new(m),
        })
    }

    fn fetch_media(&self, m: &wa::Message) -> Option<Result<Media, String>> {
        struct M<'a> {
            kind: Kind,
            mimetype: Option<&'a String>,
            caption: Option<String>,
            ptt: bool,
            direct_path: Option<&'a String>,
            media_key: Option<&'a Vec<u8>>,
            enc: Option<&'a Vec<u8>>,
            sha: Option<&'a Vec<u8>>,
        }
        let x = if let Some(i) = m.image_message.as_option() {
            M {
                kind: Kind::Image,
                mimetype: i.mimetype.as_ref(),
                caption: i.caption.clone(),
                ptt: false,
                direct_path: i.direct_path.as_ref(),
                media_key: i.media_key.as_ref(),
                enc: i.file_enc_sha256.as_ref(),
                sha: i.file_sha256.as_ref(),
            }
        } else if let Some(a) = m.audio_message.as_option() {
            M {
                kind: Kind::Audio,
                mimetype: a.mimetype.as_ref(),
                caption: None,
                ptt: a.ptt == Some(true),
                direct_path: a.direct_path.as_ref(),
                media_key: a.media_key.as_ref(),
                enc: a.file_enc_sha256.as_ref(),
                sha: a.file_sha256.as_ref(),
            }
        } else if let Some(v) = m.video_message.as_option() {
            M {
                kind: Kind::Video,
                mimetype: v.mimetype.as_ref(),
                caption: v.caption.clone(),
                ptt: false,
                direct_path: v.direct_path.as_ref(),
                media_key: v.media_key.as_ref(),
                enc: v.file_enc_sha256.as_ref(),
                sha: v.file_sha256.as_ref(),
            }
        } else if let Some(d) = m.document_message.as_option() {
            M {
                kind: Kind::Document,
                mimetype: d.mimetype.as_ref(),
                caption: d.caption.clone(),
                ptt: false,
                direct_path: d.direct_path.as_ref(),
                media_key: d.media_key.as_ref(),
                enc: d.file_enc_sha256.as_ref(),
                sha: d.file_sha256.as_ref(),
            }
        } else {
            return None;
        };
        Some((|| {
            let path = x.direct_path.ok_or("no directPath")?;
            let key = x.media_key.ok_or("no mediaKey")?;
            let blob = self
                .media
                .get(path)
                .ok_or_else(|| format!("nothing uploaded at {path}"))?;
            let bytes = media::decrypt(
                blob,
                key,
                x.kind,
                x.enc.map(|v| &v[..]),
                x.sha.map(|v| &v[..]),
            )?;
            Ok(Media {
                kind: x.kind.mms().to_string(),
                mimetype: x.mimetype.cloned().unwrap_or_default(),
                caption: x.caption,
                ptt: x.ptt,
                bytes,
            })
        })())
    }

    /// Puts a CDN copy of `bytes` and the message fields naming it.
    pub(crate) fn upload(
        &mut self,
        bytes: &[u8],
        kind: Kind,
    ) -> (String, String, media::Encrypted) {
        let enc = media::encrypt(bytes, kind);
        let path = media::store(self, kind, enc.blob.clone());
        let url = format!("https://{}{}", self.media_host, path);
        (url, path, enc)
    }
}

/// A text message, quoting `quote` (id, author's phone) when given.
fn text_message(
    w: &World,
    text: &str,
    quote: Option<(&str, &str)>,
    mentions: &[String],
) -> wa::Message {
    if quote.is_none() && mentions.is_empty() {
        return wa::Message {
            conversation: Some(text.to_string()),
            ..Default::default()
        };
    }
    let mut ctx = wa::ContextInfo {
        mentioned_jid: mentions.to_vec(),
        ..Default::default()
    };
    if let Some((id, author)) = quote {
        ctx.stanza_id = Some(id.to_string());
        ctx.participant = Some(Jid::pn(author.to_string()).to_string());
        ctx.quoted_message = MessageField::some(wa::Message {
            conversation: Some(w.quoted_text(author, id).unwrap_or_default()),
            ..Default::default()
        });
    }
    wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some(text.to_string()),
            context_info: MessageField::some(ctx),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl World {
    /// The text of message `id` by `author`, if the double saw it.
    fn quoted_text(&self, author: &str, id: &str) -> Option<String> {
        let by_author = |from: &str| {
            from.starts_with(&format!("{author}:")) || from.starts_with(&format!("{author}@"))
        };
        self.accounts
            .values()
            .flat_map(|a| &a.received)
            .find(|r| r.id == id && by_author(&r.from))
            .and_then(|r| r.text.clone())
    }
}

impl FakeWhatsAppWeb {
    /// `from`'s phone sends `message` to `to`; its id.
    pub fn send_message(&self, from: &str, to: &str, message: &wa::Message) -> String {
        let mut w = self.shared.lock();
        let id = w.new_id();
        w.send_from_phone(from, to, &id, message);
        id
    }

    /// The next `msg` (not `pkmsg`) `phone`'s phone sends arrives with a
    /// broken MAC (the device's retry receipt gets it sent again).
    pub fn garble_next(&self, phone: &str) {
        self.shared.lock().account_mut(phone).garble_next = true;
    }

    /// `from`'s phone sends `text` to `to`; the message id.
    pub fn send_text(&self, from: &str, to: &str, text: &str) -> String {
        let m = text_message(&self.shared.lock(), text, None, &[]);
        self.send_message(from, to, &m)
    }

    /// `from`'s phone replies to message `quoted_id`, written by
    /// `quoted_author` (a phone number), with `text`.
    pub fn send_reply(
        &self,
        from: &str,
        to: &str,
        text: &str,
        quoted_id: &str,
        quoted_author: &str,
    ) -> String {
        let m = text_message(
            &self.shared.lock(),
            text,
            Some((quoted_id, quoted_author)),
            &[],
        );
        self.send_message(from, to, &m)
    }

    /// `from`'s phone sends an image (uploaded to the CDN, encrypted).
    pub fn send_image(
        &self,
        from: &str,
        to: &str,
        bytes: &[u8],
        mimetype: &str,
        caption: Option<&str>,
    ) -> String {
        let m = {
            let mut w = self.shared.lock();
            let (url, path, enc) = w.upload(bytes, Kind::Image);
            wa::Message {
                image_message: MessageField::some(wa::message::ImageMessage {
                    url: Some(url),
                    mimetype: Some(mimetype.to_string()),
                    caption: caption.map(str::to_string),
                    file_sha256: Some(enc.file_sha256.to_vec()),
                    file_length: Some(bytes.len() as u64),
                    media_key: Some(enc.media_key.to_vec()),
                    file_enc_sha256: Some(enc.file_enc_sha256.to_vec()),
                    direct_path: Some(path),
                    media_key_timestamp: Some(super::noise::now_secs() as i64),
                    ..Default::default()
                }),
                ..Default::default()
            }
        };
        self.send_message(from, to, &m)
    }

    /// `from`'s phone sends a voice note (Ogg Opus).
    pub fn send_voice(&self, from: &str, to: &str, ogg: &[u8], seconds: u32) -> String {
        let m = {
            let mut w = self.shared.lock();
            let (url, path, enc) = w.upload(ogg, Kind::Audio);
            wa::Message {
                audio_message: MessageField::some(wa::message::AudioMessage {
                    url: Some(url),
                    mimetype: Some("audio/ogg; codecs=opus".to_string()),
                    file_sha256: Some(enc.file_sha256.to_vec()),
                    file_length: Some(ogg.len() as u64),
                    seconds: Some(seconds),
                    ptt: Some(true),
                    media_key: Some(enc.media_key.to_vec()),
                    file_enc_sha256: Some(enc.file_enc_sha256.to_vec()),
                    direct_path: Some(path),
                    media_key_timestamp: Some(super::noise::now_secs() as i64),
                    ..Default::default()
                }),
                ..Default::default()
            }
        };
        self.send_message(from, to, &m)
    }

    /// The text-and-mentions message builder the group sends share.
    pub(crate) fn text_with_mentions(&self, text: &str, mentions: &[String]) -> wa::Message {
        text_message(&self.shared.lock(), text, None, mentions)
    }
}

/// Content of a stanza's `<enc>` children, for the groups module.
pub(crate) fn enc_bytes(n: &Node) -> Vec<u8> {
    match &n.content {
        Some(NodeContent::Bytes(b)) => b.clone(),
        _ => Vec::new(),
    }
}
