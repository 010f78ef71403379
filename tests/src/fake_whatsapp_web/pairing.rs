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
//! - Phone-number codes end the same way ([`super::pair_code`]).

use super::media::{b64, hmac_sha256};
use super::wire::{self, attr, child, node, s};
use super::{Companion, FakeWhatsAppWeb, Out, World};
use base64::Engine as _;
use rand::RngExt as _;
use wacore::libsignal::protocol::PublicKey;
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
    /// The refs shown as QR codes and until when each is good.
    pub refs: Vec<(String, std::time::Instant)>,
    /// When those refs were sent.
    pub issued: std::time::Instant,
    /// `<pair-success>` sent, `<pair-device-sign>` awaited.
    pub linking: Option<Linking>,
    pub code: Option<super::pair_code::CodeFlow>,
}

pub(crate) struct Linking {
    pub iq_id: String,
    pub phone: String,
    pub device: u16,
    pub key_index: u32,
    pub details: Vec<u8>,
    pub account_signature: Vec<u8>,
}

fn key32(b: &[u8]) -> Option<[u8; 32]> {
    b.try_into().ok()
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
                issued: std::time::Instant::now(),
                linking: None,
                code: None,
            })
        })();
        let Some(registration) = parsed else {
            let n = node("failure", &[("reason", s("400"))], vec![]);
            self.send(conn, n);
            self.close(conn, Out::Close);
            return;
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            c.registration = Some(registration);
        }
        self.issue_refs(conn);
    }

    /// Reissues refs that are due under `reissue_every`.
    pub(crate) fn reissue_due(&mut self) {
        let Some(every) = self.reissue_every else {
            return;
        };
        let due: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| {
                c.device.is_none()
                    && c.registration
                        .as_ref()
                        .is_some_and(|r| r.linking.is_none() && r.issued.elapsed() >= every)
            })
            .map(|(id, _)| *id)
            .collect();
        for conn in due {
            self.issue_refs(conn);
        }
    }

    /// Sends the registering socket `conn` six fresh refs (`<pair-device>`),
    /// retiring any it had. Ref `i` stays good while the device would show
    /// it: 60 s for the first, 20 s more for each next one.
    pub(crate) fn issue_refs(&mut self, conn: u64) {
        let mut rng = rand::rng();
        let now = std::time::Instant::now();
        let refs: Vec<(String, std::time::Instant)> = (0..6u64)
            .map(|i| {
                let r: [u8; 36] = rng.random();
                let until = now + std::time::Duration::from_secs(60 + 20 * i);
                (format!("2@{}", b64(&r)), until)
            })
            .collect();
        let nodes = refs
            .iter()
            .map(|(r, _)| wire::bytes_node("ref", &[], r.as_bytes().to_vec()))
            .collect();
        match self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.registration.as_mut())
        {
            Some(r) if r.linking.is_none() => {
                r.refs = refs;
                r.issued = now;
            }
            _ => return,
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
            vec![node("pair-device", &[], nodes)],
        );
        self.send(conn, iq);
    }

    /// The phone approves the registering device on `conn` with `adv_secret`.
    pub(crate) fn pair_success(&mut self, conn: u64, phone: &str, adv_secret: &[u8]) -> u16 {
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
            low_notified: false,
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
        let (conn, until) = w
            .conns
            .iter()
            .find_map(|(id, c)| {
                let r = c.registration.as_ref()?;
                let (_, until) = r.refs.iter().find(|(x, _)| x == parts[0])?;
                (r.noise[..] == noise[..] && r.identity[..] == identity[..] && r.linking.is_none())
                    .then_some((*id, *until))
            })
            .ok_or_else(|| format!("no device is showing ref {}", parts[0]))?;
        if std::time::Instant::now() >= until {
            return Err(format!("QR code expired (ref {})", parts[0]));
        }
        Ok(w.pair_success(conn, phone, &adv))
    }

    /// Sends every device waiting to be linked six fresh refs, retiring
    /// the ones it shows (its QR code changes at once).
    pub fn reissue_qr_refs(&self) {
        let mut w = self.shared.lock();
        let registering: Vec<u64> = w
            .conns
            .iter()
            .filter(|(_, c)| c.registration.is_some() && c.device.is_none())
            .map(|(id, _)| *id)
            .collect();
        for conn in registering {
            w.issue_refs(conn);
        }
    }

    /// From now on, send devices waiting to be linked fresh refs every
    /// `every` (`None`: never, as WhatsApp, which sends one set per
    /// connection and leaves the rotation to the device).
    pub fn reissue_qr_refs_every(&self, every: Option<std::time::Duration>) {
        self.shared.lock().reissue_every = every;
    }
}
