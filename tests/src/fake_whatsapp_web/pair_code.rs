//! Linking by phone-number code, the server's and the phone's halves
//! (WA Web's `DeviceLinkingApi` as the client's `pair_code.rs` quotes it;
//! whatsmeow's `pair-code.go` for the primary's side):
//!
//! - The device's `companion_hello` carries its ephemeral key wrapped under
//!   the code (`salt ‖ iv ‖ AES-256-CTR(PBKDF2-SHA256(code, salt, 131072))`)
//!   and its Noise key; the server answers a pairing ref.
//! - [`FakeWhatsAppWeb::link_with_code`] is the user typing the code on the
//!   phone: the phone unwraps the device's ephemeral, wraps its own under
//!   the same code, and the server passes it on with the phone's identity
//!   key (`<notification type="link_code_companion_reg">`, stage
//!   `primary_hello`).
//! - The device's `companion_finish` key bundle (AES-256-GCM under
//!   HKDF(ephemeral agreement, salt, "link_code_pairing_key_bundle_encryption_key"))
//!   holds both identity keys and 32 random bytes; with the identity
//!   agreement they give the adv secret (HKDF "adv_secret"), and linking
//!   goes on as for a QR code: `<pair-success>`.

use super::media::{b64, hkdf, hmac_sha256};
use super::router::result;
use super::wire::{self, attr, child, child_bytes, node, s};
use super::{FakeWhatsAppWeb, World};
use rand::RngExt as _;
use wacore::libsignal::crypto::{aes_256_gcm_decrypt, Aes256Ctr32};
use wacore::libsignal::protocol::{KeyPair, PublicKey};
use wacore_binary::Node;

/// A phone-number code flow.
pub(crate) struct CodeFlow {
    pub phone: String,
    pub wrapped_ephemeral: Vec<u8>,
    pub pairing_ref: String,
    /// After `primary_hello`: the phone's ephemeral and the device's.
    pub primary_ephemeral: Option<(KeyPair, [u8; 32])>,
}

fn pbkdf2_sha256(password: &[u8], salt: &[u8], rounds: u32) -> [u8; 32] {
    let mut u = hmac_sha256(password, &[salt, &1u32.to_be_bytes()].concat());
    let mut out = u;
    for _ in 1..rounds {
        u = hmac_sha256(password, &u);
        for (o, x) in out.iter_mut().zip(u.iter()) {
            *o ^= x;
        }
    }
    out
}

/// `salt ‖ iv ‖ AES-256-CTR(PBKDF2(code, salt), iv, key)`, either way.
fn code_ctr(code: &str, salt: &[u8], iv: &[u8], data: &mut [u8]) {
    let key = pbkdf2_sha256(code.as_bytes(), salt, 131_072);
    let mut ctr = Aes256Ctr32::from_key(
        &key,
        &iv[..12],
        u32::from_be_bytes(iv[12..16].try_into().expect("4 bytes")),
    )
    .expect("AES-CTR");
    ctr.process(data);
}

impl World {
    /// `link_code_companion_reg`: `companion_hello` and `companion_finish`.
    pub(crate) fn on_link_code(&mut self, conn: u64, n: &Node) -> Option<Node> {
        let reg_node = child(n, "link_code_companion_reg")?;
        let stage = attr(reg_node, "stage").unwrap_or_default();
        let Some(reg) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.registration.as_mut())
        else {
            return Some(super::router::error(n, 400, "bad-request"));
        };
        match stage.as_str() {
            "companion_hello" => {
                let phone = wire::jid_attr(reg_node, "jid").map(|j| j.user.to_string());
                let wrapped = child_bytes(
                    reg_node,
                    "link_code_pairing_wrapped_companion_ephemeral_pub",
                );
                let auth = child_bytes(reg_node, "companion_server_auth_key_pub");
                let (Some(phone), Some(wrapped)) = (phone, wrapped) else {
                    return Some(super::router::error(n, 400, "bad-request"));
                };
                if wrapped.len() != 80 || auth.as_deref() != Some(&reg.noise[..]) {
                    return Some(super::router::error(n, 400, "bad-request"));
                }
                let r: [u8; 16] = rand::rng().random();
                let pairing_ref = b64(&r);
                reg.code = Some(CodeFlow {
                    phone: phone.clone(),
                    wrapped_ephemeral: wrapped,
                    pairing_ref: pairing_ref.clone(),
                    primary_ephemeral: None,
                });
                if !self.accounts.contains_key(&phone) {
                    return Some(super::router::error(n, 404, "item-not-found"));
                }
                Some(result(
                    n,
                    vec![node(
                        "link_code_companion_reg",
                        &[],
                        vec![wire::bytes_node(
                            "link_code_pairing_ref",
                            &[],
                            pairing_ref.into_bytes(),
                        )],
                    )],
                ))
            }
            "companion_finish" => {
                let flow = reg.code.as_ref()?;
                let ok_ref = child_bytes(reg_node, "link_code_pairing_ref").as_deref()
                    == Some(flow.pairing_ref.as_bytes());
                let bundle = child_bytes(reg_node, "link_code_pairing_wrapped_key_bundle");
                let identity = child_bytes(reg_node, "companion_identity_public");
                let (Some((eph, companion_eph)), Some(bundle), true) =
                    (flow.primary_ephemeral.as_ref(), bundle, ok_ref)
                else {
                    return Some(super::router::error(n, 400, "bad-request"));
                };
                let phone = flow.phone.clone();
                let eph_shared = eph
                    .private_key
                    .calculate_agreement(&PublicKey::from_djb_public_key_bytes(companion_eph).ok()?)
                    .ok()?;
                let reg_identity = reg.identity;
                if bundle.len() < 32 + 12 + 16 || identity.as_deref() != Some(&reg_identity[..]) {
                    return Some(super::router::error(n, 400, "bad-request"));
                }
                let key = hkdf(
                    &eph_shared,
                    &bundle[..32],
                    b"link_code_pairing_key_bundle_encryption_key",
                    32,
                );
                let mut plain = Vec::new();
                let key: [u8; 32] = key.try_into().ok()?;
                let iv: [u8; 12] = bundle[32..44].try_into().ok()?;
                let opened = aes_256_gcm_decrypt(&key, &iv, b"", &bundle[44..], &mut plain);
                let primary_identity = self.account(&phone).signal.identity_public();
                if opened.is_err()
                    || plain.len() != 96
                    || plain[..32] != reg_identity
                    || plain[32..64] != primary_identity
                {
                    return Some(super::router::error(n, 400, "bad-request"));
                }
                let identity_shared = self
                    .account(&phone)
                    .signal
                    .identity
                    .private_key()
                    .calculate_agreement(&PublicKey::from_djb_public_key_bytes(&reg_identity).ok()?)
                    .ok()?;
                let secret = [&eph_shared[..], &identity_shared, &plain[64..96]].concat();
                let adv_secret = hkdf(&secret, &[], b"adv_secret", 32);
                self.send(conn, result(n, vec![]));
                self.pair_success(conn, &phone, &adv_secret);
                None
            }
            _ => Some(super::router::error(n, 400, "bad-request")),
        }
    }
}

impl FakeWhatsAppWeb {
    /// The user types `code` into `phone`'s phone, after a device asked for
    /// a code for that number (`primary_hello`). Pairing ends when the
    /// device sends its key bundle.
    pub fn link_with_code(&self, phone: &str, code: &str) -> Result<(), String> {
        let mut w = self.shared.lock();
        let primary_identity = w
            .accounts
            .get(phone)
            .ok_or_else(|| format!("no account {phone}"))?
            .signal
            .identity_public();
        let code = code.replace('-', "").to_uppercase();
        let (conn, flow) = w
            .conns
            .iter_mut()
            .find_map(|(id, c)| {
                let flow = c.registration.as_mut()?.code.as_mut()?;
                (flow.phone == phone).then_some((*id, flow))
            })
            .ok_or_else(|| format!("no device asked for a code for {phone}"))?;
        let wrapped = flow.wrapped_ephemeral.clone();
        let mut companion_eph: [u8; 32] = wrapped[48..80].try_into().expect("32 bytes");
        code_ctr(&code, &wrapped[..32], &wrapped[32..48], &mut companion_eph);
        let mut rng = rand::rng();
        let eph = KeyPair::generate(&mut rng);
        let salt: [u8; 32] = rng.random();
        let iv: [u8; 16] = rng.random();
        let mut ct: [u8; 32] = eph
            .public_key
            .public_key_bytes()
            .try_into()
            .expect("32 bytes");
        code_ctr(&code, &salt, &iv, &mut ct);
        let pairing_ref = flow.pairing_ref.clone();
        flow.primary_ephemeral = Some((eph, companion_eph));
        let id = w.new_id();
        let notification = node(
            "notification",
            &[
                ("from", s(wire::SERVER)),
                ("id", s(id)),
                ("t", s(super::noise::now_secs().to_string())),
                ("type", s("link_code_companion_reg")),
            ],
            vec![node(
                "link_code_companion_reg",
                &[("stage", s("primary_hello"))],
                vec![
                    wire::bytes_node("link_code_pairing_ref", &[], pairing_ref.into_bytes()),
                    wire::bytes_node(
                        "link_code_pairing_wrapped_primary_ephemeral_pub",
                        &[],
                        [&salt[..], &iv, &ct].concat(),
                    ),
                    wire::bytes_node("primary_identity_pub", &[], primary_identity.to_vec()),
                ],
            )],
        );
        w.send(conn, notification);
        Ok(())
    }
}
