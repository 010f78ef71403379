//! Linking a companion device to an account, the server's and the primary
//! phone's halves (WA Web's `Handle/PairDevice.js` and
//! `DeviceLinkingApi`; whatsmeow's `pair.go` and `pair-code.go` for the
//! phone-side crypto):
//!
//! - A new device's handshake carries `DevicePairingRegistrationData`
//!   (registration id, identity key, signed prekey, device props). The server
//!   answers `<iq xmlns="md" type="set"><pair-device>` with six refs; the
//!   device shows `ref,noise,identity,adv-secret,type` as QR codes, rotating
//!   the refs itself (60 s, then 20 s each).
//! - The phone scans one ([`FakeWhatsAppWeb::scan_qr`]): the next key index,
//!   an `ADVDeviceIdentity`, the account's signature over
//!   `[6,0] ‖ details ‖ device identity key`, all under an HMAC-SHA256 keyed
//!   with the QR's adv secret, sent as `<pair-success>` with the device's
//!   new JID and LID.
//! - The device answers `<pair-device-sign>` with its own signature over
//!   `[6,1] ‖ details ‖ device identity ‖ account key`; the server checks it,
//!   keeps the signed identity (it is what `<device-identity>` carries in
//!   prekey bundles), ends the stream with `<stream:error code="515"/>` and
//!   the device logs in with `username`/`device`. The phone then shares its
//!   app-state key with the new device.
//! - Phone-number codes: the device's `companion_hello` (its ephemeral key
//!   wrapped under the code: PBKDF2-SHA256 ×131072, AES-256-CTR) gets a
//!   pairing ref; [`FakeWhatsAppWeb::link_with_code`] is the user typing the
//!   code on the phone (`primary_hello` with the phone's wrapped ephemeral
//!   and identity key); the device's `companion_finish` key bundle (AES-GCM
//!   under HKDF of the ephemeral agreement) yields the adv secret, and
//!   pairing ends as above.
//! - Unlinking: from the device (`remove-companion-device`), or from the
//!   phone ([`FakeWhatsAppWeb::logout_from_phone`]: `<stream:error
//!   code="401"><conflict type="device_removed"/>` to a live socket, and a
//!   `401` `<failure>` at every later login).

use super::media::{b64, hkdf, hmac_sha256};
use super::router::result;
use super::wire::{self, attr, child, child_bytes, node, s};
use super::{Companion, FakeWhatsAppWeb, Out, World};
use base64::Engine as _;
use rand::RngExt as _;
use wacore::libsignal::crypto::{aes_256_gcm_decrypt, Aes256Ctr32};
use wacore::libsignal::protocol::{KeyPair, PublicKey};
use wacore_binary::Node;
use waproto::buffa::Message as _;
use waproto::whatsapp as wa;

const ADV_ACCOUNT_SIGNATURE: &[u8] = &[6, 0];
const ADV_DEVICE_SIGNATURE: &[u8] = &[6, 1];
const QR_DEEP_LINK: &str = "https://wa.me/settings/linked_devices#";

/// A socket that came to register a new device.
pub(crate) struct Registration {
    pub noise: [u8; 32],
    pub identity: [u8; 32],
    pub registration_id: u32,
    pub signed_prekey: (u32, [u8; 32], Vec<u8>),
    pub platform: String,
    pub refs: Vec<String>,
    /// `<pair-success>` sent, `<pair-device-sign>` awaited.
    pub linking: Option<Linking>,
    pub code: Option<CodeFlow>,
}

pub(crate) struct Linking {
    pub iq_id: String,
    pub phone: String,
    pub device: u16,
    pub key_index: u32,
    pub details: Vec<u8>,
    pub account_signature: Vec<u8>,
}

/// A phone-number code flow.
pub(crate) struct CodeFlow {
    pub phone: String,
    pub wrapped_ephemeral: Vec<u8>,
    pub pairing_ref: String,
    /// After `primary_hello`: the phone's ephemeral and the device's.
    pub primary_ephemeral: Option<(KeyPair, [u8; 32])>,
}

fn key32(b: &[u8]) -> Option<[u8; 32]> {
    b.try_into().ok()
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

fn platform_name(props: Option<&[u8]>) -> String {
    props
        .and_then(|p| wa::DeviceProps::decode_from_slice(p).ok())
        .and_then(|p| p.os)
        .unwrap_or_default()
}

impl World {
    /// A new device's registration: six refs to show as QR codes.
    pub(crate) fn on_registration(
        &mut self,
        conn: u64,
        client_static: [u8; 32],
        reg: &wa::client_payload::DevicePairingRegistrationData,
    ) {
        let uint = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .map(|b| b.iter().fold(0u32, |a, x| a << 8 | u32::from(*x)))
        };
        let parsed = (|| {
            let identity = key32(reg.e_ident.as_deref()?)?;
            let skey = key32(reg.e_skey_val.as_deref()?)?;
            let sig = reg.e_skey_sig.clone()?;
            // The signed prekey must be signed by the identity key.
            let ok = PublicKey::from_djb_public_key_bytes(&identity)
                .ok()?
                .verify_signature(
                    &PublicKey::from_djb_public_key_bytes(&skey)
                        .ok()?
                        .serialize(),
                    &sig,
                );
            (ok && reg.e_keytype.as_deref() == Some(&[5][..])).then_some(Registration {
                noise: client_static,
                identity,
                registration_id: uint(&reg.e_regid)?,
                signed_prekey: (uint(&reg.e_skey_id)?, skey, sig),
                platform: platform_name(reg.device_props.as_deref()),
                refs: Vec::new(),
                linking: None,
                code: None,
            })
        })();
        let Some(mut registration) = parsed else {
            let n = node("failure", &[("reason", s("400"))], vec![]);
            self.send(conn, n);
            self.close(conn, Out::Close);
            return;
        };
        let mut rng = rand::rng();
        registration.refs = (0..6)
            .map(|_| {
                let r: [u8; 36] = rng.random();
                format!("2@{}", b64(&r))
            })
            .collect();
        let refs = registration
            .refs
            .iter()
            .map(|r| wire::bytes_node("ref", &[], r.as_bytes().to_vec()))
            .collect();
        if let Some(c) = self.conns.get_mut(&conn) {
            c.registration = Some(registration);
        }
        let id = self.new_id();
        let iq = node(
            "iq",
            &[
                ("from", s(wire::SERVER)),
                ("type", s("set")),
                ("id", s(id)),
                ("xmlns", s("md")),
            ],
            vec![node("pair-device", &[], refs)],
        );
        self.send(conn, iq);
    }

    /// The phone approves the registering device on `conn` with `adv_secret`.
    fn pair_success(&mut self, conn: u64, phone: &str, adv_secret: &[u8]) -> u16 {
        let reg_identity = self.conns[&conn]
            .registration
            .as_ref()
            .expect("registration")
            .identity;
        let a = self.account_mut(phone);
        let device = a.next_device;
        let key_index = a.next_key_index;
        a.next_device += 1;
        a.next_key_index += 1;
        let details = wa::ADVDeviceIdentity {
            raw_id: Some(a.adv_raw_id),
            timestamp: Some(super::noise::now_secs()),
            key_index: Some(key_index),
            account_type: Some(wa::ADVEncryptionType::E2EE),
            device_type: Some(wa::ADVEncryptionType::E2EE),
        }
        .encode_to_vec();
        let account_key = a.signal.identity_public();
        let account_signature = a
            .signal
            .identity
            .private_key()
            .calculate_signature(
                &[ADV_ACCOUNT_SIGNATURE, &details, &reg_identity].concat(),
                &mut rand::rng(),
            )
            .expect("account signature")
            .to_vec();
        let signed = wa::ADVSignedDeviceIdentity {
            details: Some(details.clone()),
            account_signature_key: Some(account_key.to_vec()),
            account_signature: Some(account_signature.clone()),
            device_signature: None,
        }
        .encode_to_vec();
        let container = wa::ADVSignedDeviceIdentityHMAC {
            hmac: Some(hmac_sha256(adv_secret, &signed).to_vec()),
            details: Some(signed),
            account_type: Some(wa::ADVEncryptionType::E2EE),
        }
        .encode_to_vec();
        let (pn, lid) = (wire::pn(phone, device), wire::lid(&a.lid, device));
        let iq_id = self.new_id();
        let iq = node(
            "iq",
            &[
                ("from", s(wire::SERVER)),
                ("type", s("set")),
                ("id", s(iq_id.clone())),
                ("xmlns", s("md")),
                ("t", s(super::noise::now_secs().to_string())),
            ],
            vec![node(
                "pair-success",
                &[],
                vec![
                    wire::bytes_node("device-identity", &[], container),
                    node("platform", &[("name", s("android"))], vec![]),
                    node(
                        "device",
                        &[("jid", wire::j(&pn)), ("lid", wire::j(&lid))],
                        vec![],
                    ),
                ],
            )],
        );
        if let Some(r) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.registration.as_mut())
        {
            r.linking = Some(Linking {
                iq_id,
                phone: phone.to_string(),
                device,
                key_index,
                details,
                account_signature,
            });
        }
        self.send(conn, iq);
        device
    }

    /// A device's answer to an IQ the server sent it.
    pub(crate) fn on_iq_answer(&mut self, conn: u64, n: &Node) {
        let id = attr(n, "id").unwrap_or_default();
        let Some(reg) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.registration.as_mut())
        else {
            return;
        };
        let Some(linking) = reg.linking.take_if(|l| l.iq_id == id) else {
            return;
        };
        let signed = child(n, "pair-device-sign")
            .and_then(|p| child(p, "device-identity"))
            .filter(|d| attr(d, "key-index") == Some(linking.key_index.to_string()))
            .and_then(wire::content_bytes)
            .map(<[u8]>::to_vec);
        let account_key = self.account(&linking.phone).signal.identity_public();
        let reg = self.conns[&conn]
            .registration
            .as_ref()
            .expect("registration");
        let valid = attr(n, "type").as_deref() == Some("result")
            && signed.as_deref().is_some_and(|bytes| {
                let Ok(id) = wa::ADVSignedDeviceIdentity::decode_from_slice(bytes) else {
                    return false;
                };
                let device_key = PublicKey::from_djb_public_key_bytes(&reg.identity);
                id.details.as_deref() == Some(&linking.details[..])
                    && id.account_signature.as_deref() == Some(&linking.account_signature[..])
                    && device_key.is_ok_and(|k| {
                        k.verify_signature(
                            &[
                                ADV_DEVICE_SIGNATURE,
                                &linking.details,
                                &reg.identity,
                                &account_key,
                            ]
                            .concat(),
                            id.device_signature.as_deref().unwrap_or_default(),
                        )
                    })
            });
        if !valid {
            eprintln!(
                "[fake-wa] pairing refused by the device or badly signed: {}",
                wire::render(n)
            );
            return;
        }
        let companion = Companion {
            device: linking.device,
            noise: reg.noise,
            identity: reg.identity,
            registration_id: reg.registration_id,
            signed_prekey: reg.signed_prekey.clone(),
            prekeys: Default::default(),
            uploaded: 0,
            signed_identity: signed.unwrap_or_default(),
            key_index: linking.key_index,
            platform: reg.platform.clone(),
            removed: false,
            conn: None,
            outbox: Vec::new(),
        };
        self.account_mut(&linking.phone)
            .companions
            .insert(linking.device, companion);
        self.send(conn, node("stream:error", &[("code", s("515"))], vec![]));
        self.close(conn, Out::Close);
        self.share_app_state_key(&linking.phone, linking.device);
    }

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
    /// The primary phone of `phone` scans `qr` (what the device shows:
    /// `ref,noise,identity,adv,type`, with or without the deep-link
    /// prefix). Returns the new device's id once `<pair-success>` is sent;
    /// an error when no socket shows that code.
    pub fn scan_qr(&self, qr: &str, phone: &str) -> Result<u16, String> {
        let body = qr.strip_prefix(QR_DEEP_LINK).unwrap_or(qr);
        let parts: Vec<&str> = body.split(',').collect();
        if parts.len() < 4 {
            return Err(format!("not a linking QR code: {qr}"));
        }
        let decode = |p: &str| base64::engine::general_purpose::STANDARD.decode(p).ok();
        let (Some(noise), Some(identity), Some(adv)) =
            (decode(parts[1]), decode(parts[2]), decode(parts[3]))
        else {
            return Err(format!("bad base64 in the QR code: {qr}"));
        };
        let mut w = self.shared.lock();
        if !w.accounts.contains_key(phone) {
            return Err(format!("no account {phone}"));
        }
        let conn = w
            .conns
            .iter()
            .find(|(_, c)| {
                c.registration.as_ref().is_some_and(|r| {
                    r.refs.iter().any(|x| x == parts[0])
                        && r.noise[..] == noise[..]
                        && r.identity[..] == identity[..]
                        && r.linking.is_none()
                })
            })
            .map(|(id, _)| *id)
            .ok_or_else(|| format!("no device is showing ref {}", parts[0]))?;
        Ok(w.pair_success(conn, phone, &adv))
    }

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
