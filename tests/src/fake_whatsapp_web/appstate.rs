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

use super::media::{hkdf, hmac_sha256};
use super::router::{error, result};
use super::signal::pad;
use super::wire::{self, attr, child, children, node, s};
use super::World;
use rand::RngExt as _;
use wacore::libsignal::crypto::aes_256_cbc_encrypt_into;
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

    fn collection(&mut self, phone: &str, name: &str, version: u64) -> Node {
        if name != "critical_block" || version >= 1 {
            let at = if name == "critical_block" { 1 } else { 0 }.max(version);
            return node(
                "collection",
                &[("name", s(name)), ("version", s(at.to_string()))],
                vec![],
            );
        }
        let a = self.account(phone);
        let patch = push_name_patch(&a.app_state_key, &a.push_name);
        node(
            "collection",
            &[
                ("name", s(name)),
                ("version", s("1")),
                ("has_more_patches", s("false")),
            ],
            vec![node(
                "patches",
                &[],
                vec![wire::bytes_node("patch", &[], patch)],
            )],
        )
    }
}

/// WhatsApp's LTHash ("WhatsApp Patch Integrity"): each value MAC expands
/// (HKDF-SHA256) to 128 bytes added into the state as little-endian u16s.
fn lthash_add(state: &mut [u8; 128], item: &[u8]) {
    let d = hkdf(item, &[], b"WhatsApp Patch Integrity", 128);
    for i in (0..128).step_by(2) {
        let sum = u16::from_le_bytes([state[i], state[i + 1]])
            .wrapping_add(u16::from_le_bytes([d[i], d[i + 1]]));
        state[i..i + 2].copy_from_slice(&sum.to_le_bytes());
    }
}

fn hmac_sha512(key: &[u8], parts: &[&[u8]]) -> [u8; 64] {
    use hmac::Mac as _;
    let mut mac = <hmac::Hmac<sha2::Sha512> as hmac::Mac>::new_from_slice(key).expect("HMAC key");
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

/// Version 1 of `critical_block`: one SET of `setting_pushName`, as the
/// phone uploads it (keys: HKDF "WhatsApp Mutation Keys" of the sync key,
/// 160 bytes: index, value encryption, value MAC, snapshot MAC, patch MAC).
fn push_name_patch(key: &SyncKey, push_name: &str) -> Vec<u8> {
    let k = hkdf(&key.data, &[], b"WhatsApp Mutation Keys", 160);
    let (index_key, enc_key, value_mac_key, snapshot_key, patch_key) =
        (&k[..32], &k[32..64], &k[64..96], &k[96..128], &k[128..160]);
    let index = br#"["setting_pushName"]"#.to_vec();
    let data = wa::SyncActionData {
        index: Some(index.clone()),
        value: MessageField::some(wa::SyncActionValue {
            timestamp: Some(key.timestamp),
            push_name_setting: MessageField::some(wa::sync_action_value::PushNameSetting {
                name: Some(push_name.to_string()),
            }),
            ..Default::default()
        }),
        padding: Some(Vec::new()),
        version: Some(1),
    }
    .encode_to_vec();
    let iv: [u8; 16] = rand::rng().random();
    let mut blob = iv.to_vec();
    let mut ct = Vec::new();
    aes_256_cbc_encrypt_into(&data, enc_key, &iv, &mut ct).expect("AES-CBC");
    blob.extend_from_slice(&ct);
    // SET is operation 0, MAC'd as 1; the key id's length + 1 closes it.
    let mut ad_len = [0u8; 8];
    ad_len[7] = (key.id.len() + 1) as u8;
    let value_mac = hmac_sha512(value_mac_key, &[&[1], &key.id, &blob, &ad_len]);
    let value_mac = &value_mac[..32];
    blob.extend_from_slice(value_mac);
    let index_mac = hmac_sha256(index_key, &index);
    let mut state = [0u8; 128];
    lthash_add(&mut state, value_mac);
    let version = 1u64.to_be_bytes();
    let name = b"critical_block";
    let snapshot_mac = hmac_sha256(snapshot_key, &[&state[..], &version, name].concat());
    let patch_mac = hmac_sha256(
        patch_key,
        &[&snapshot_mac[..], value_mac, &version, name].concat(),
    );
    wa::SyncdPatch {
        version: MessageField::some(wa::SyncdVersion { version: Some(1) }),
        mutations: vec![wa::SyncdMutation {
            operation: Some(wa::syncd_mutation::SyncdOperation::SET.into()),
            record: MessageField::some(wa::SyncdRecord {
                index: MessageField::some(wa::SyncdIndex {
                    blob: Some(index_mac.to_vec()),
                }),
                value: MessageField::some(wa::SyncdValue { blob: Some(blob) }),
                key_id: MessageField::some(wa::KeyId {
                    id: Some(key.id.clone()),
                }),
            }),
        }],
        snapshot_mac: Some(snapshot_mac.to_vec()),
        patch_mac: Some(patch_mac.to_vec()),
        key_id: MessageField::some(wa::KeyId {
            id: Some(key.id.clone()),
        }),
        ..Default::default()
    }
    .encode_to_vec()
}
