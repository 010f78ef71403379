//! App state (syncd), the server's and the phone's halves (the client's
//! `app_state.rs` and wacore-appstate for the format; WA Web's
//! `WAWebSyncd*` as they quote it):
//!
//! - Right after linking, the phone shares its app-state sync key with the
//!   new device: a peer `protocolMessage` of type `APP_STATE_SYNC_KEY_SHARE`
//!   (key id, 32-byte key, fingerprint) over a Signal session started from
//!   the device's registration bundle.
//! - `<iq xmlns="w:sync:app:state" type="set"><sync><collection name
//!   version return_snapshot/>…` answers each collection at its current
//!   version. `critical_block` holds one patch from the phone, setting the
//!   push name (`setting_pushName`), encrypted and MAC'd with that key
//!   (index MAC, value MAC, LTHash snapshot MAC, patch MAC); the other
//!   collections are empty.

use super::router::{error, result};
use super::signal::pad;
use super::wire::{self, attr, child, children, node, s};
use super::World;
use rand::RngExt as _;
use wacore_binary::Node;
use waproto::buffa::{Message as _, MessageField};
use waproto::whatsapp as wa;

/// The phone's app-state sync key.
#[derive(Clone)]
pub(crate) struct SyncKey {
    pub id: Vec<u8>,
    pub data: [u8; 32],
    pub timestamp: i64,
}

impl SyncKey {
    pub fn generate() -> SyncKey {
        let mut rng = rand::rng();
        let id: [u8; 6] = rng.random();
        SyncKey {
            id: id.to_vec(),
            data: rng.random(),
            timestamp: super::noise::now_secs() as i64 * 1000,
        }
    }
}

impl World {
    /// The phone sends its sync key to its new device `device`.
    pub(crate) fn share_app_state_key(&mut self, phone: &str, device: u16) {
        let (key, raw_id, index) = {
            let a = self.account(phone);
            (a.app_state_key.clone(), a.adv_raw_id, a.next_key_index - 1)
        };
        let indexes: Vec<u32> = self
            .account(phone)
            .companions
            .values()
            .filter(|c| !c.removed)
            .map(|c| c.key_index)
            .collect();
        let share = wa::Message {
            protocol_message: MessageField::some(wa::message::ProtocolMessage {
                r#type: Some(wa::message::protocol_message::Type::APP_STATE_SYNC_KEY_SHARE),
                app_state_sync_key_share: MessageField::some(wa::message::AppStateSyncKeyShare {
                    keys: vec![wa::message::AppStateSyncKey {
                        key_id: MessageField::some(wa::message::AppStateSyncKeyId {
                            key_id: Some(key.id.clone()),
                        }),
                        key_data: MessageField::some(wa::message::AppStateSyncKeyData {
                            key_data: Some(key.data.to_vec()),
                            fingerprint: MessageField::some(
                                wa::message::AppStateSyncKeyFingerprint {
                                    raw_id: Some(raw_id),
                                    current_index: Some(index),
                                    device_indexes: [0].into_iter().chain(indexes).collect(),
                                },
                            ),
                            timestamp: Some(key.timestamp),
                        }),
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let plain = pad(share.encode_to_vec());
        let Some((kind, ct)) = self.encrypt_for_device(phone, phone, device, &plain) else {
            return;
        };
        let id = self.new_id();
        let own = self.account(phone).pn();
        let stanza = node(
            "message",
            &[
                ("from", wire::j(&own)),
                ("id", s(id)),
                ("t", s(super::noise::now_secs().to_string())),
                ("type", s("protocol")),
                ("category", s("peer")),
            ],
            vec![wire::bytes_node(
                "enc",
                &[("v", s("2")), ("type", s(kind))],
                ct,
            )],
        );
        self.enqueue(phone, device, stanza);
    }

    /// `w:sync:app:state`: each requested collection at its version.
    pub(crate) fn on_app_state(&mut self, conn: u64, n: &Node) -> Node {
        let Some((phone, _)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return error(n, 401, "not-authorized");
        };
        let Some(sync) = child(n, "sync") else {
            return error(n, 400, "bad-request");
        };
        let wanted: Vec<Node> = children(sync, "collection").cloned().collect();
        let mut out = Vec::new();
        for c in wanted {
            let name = attr(&c, "name").unwrap_or_default();
            let version: u64 = attr(&c, "version")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            out.push(self.collection(&phone, &name, version));
        }
        result(n, vec![node("sync", &[], out)])
    }

    fn collection(&mut self, _phone: &str, name: &str, version: u64) -> Node {
        node(
            "collection",
            &[("name", s(name)), ("version", s(version.to_string()))],
            vec![],
        )
    }
}
