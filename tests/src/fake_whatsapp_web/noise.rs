//! The server side of WhatsApp Web's Noise handshake, as the client's
//! `wacore::handshake` state machines (XX, IK, XXfallback; WA Web's
//! `WAWebOpenChatSocket`) expect it: the prologue is `WA_CONN_HEADER`, the
//! messages are `HandshakeMessage` protobufs in 3-byte length frames, the
//! server's static key is vouched for by a `CertChain` (a leaf over the
//! static key signed by an intermediate, the intermediate signed by a root,
//! both XEdDSA signatures real), and once both sides split the state each
//! frame is AES-256-GCM under a per-direction counter.
//!
//! - XX: `-> e`, `<- e, ee, s, es` (static and certificate encrypted),
//!   `-> s, se` (client static and its `ClientPayload`).
//! - IK, for a device that cached the server static: `<- s` known,
//!   `-> e, es, s, ss` (client static and the login payload in the first
//!   message), `<- e, ee, se` (the certificate as payload).
//! - XXfallback: when the IK hello does not open under the server's static
//!   (the client cached another one), the server answers with an XX-shaped
//!   hello under the `XXfallback` pattern, reusing the client's ephemeral.
//!
//! Built from the public primitives (`wacore::handshake::NoiseHandshake`,
//! libsignal's curve), the roles reversed from the client's.

use wacore::handshake::NoiseHandshake;
use wacore::libsignal::protocol::{KeyPair, PrivateKey};
use wacore::noise::NoiseCipher;
use wacore_binary::consts::{
    NOISE_PATTERN_IK, NOISE_PATTERN_XX, NOISE_PATTERN_XXFALLBACK, WA_CONN_HEADER,
};
use waproto::buffa::Message as _;
use waproto::whatsapp as wa;

/// The double's server identity: its root (standing in for WhatsApp's
/// `WA_CERT_PUB_KEY`), the Noise static key and the chain that binds them.
pub(crate) struct ServerKeys {
    pub root: KeyPair,
    pub static_key: KeyPair,
    pub cert_chain: Vec<u8>,
}

/// Seconds since the epoch.
pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn sign(key: &PrivateKey, message: &[u8]) -> Vec<u8> {
    key.calculate_signature(message, &mut rand::rng())
        .expect("XEdDSA signature")
        .to_vec()
}

fn certificate(
    serial: u32,
    issuer_serial: u32,
    key: &[u8],
    issuer: &PrivateKey,
) -> wa::cert_chain::NoiseCertificate {
    let now = now_secs();
    let details = wa::cert_chain::noise_certificate::Details {
        serial: Some(serial),
        issuer_serial: Some(issuer_serial),
        key: Some(key.to_vec()),
        not_before: Some(now - 86_400),
        not_after: Some(now + 10 * 365 * 86_400),
    }
    .encode_to_vec();
    wa::cert_chain::NoiseCertificate {
        signature: Some(sign(issuer, &details)),
        details: Some(details),
    }
}

impl ServerKeys {
    /// A fresh root, intermediate and static key; the intermediate (serial
    /// 1, issued by serial 0, the root) signed by the root, the leaf (serial
    /// 2) over the static key signed by the intermediate.
    pub fn generate() -> ServerKeys {
        let mut rng = rand::rng();
        let root = KeyPair::generate(&mut rng);
        let intermediate = KeyPair::generate(&mut rng);
        let static_key = KeyPair::generate(&mut rng);
        let chain = wa::CertChain {
            intermediate: waproto::buffa::MessageField::some(certificate(
                1,
                0,
                intermediate.public_key.public_key_bytes(),
                &root.private_key,
            )),
            leaf: waproto::buffa::MessageField::some(certificate(
                2,
                1,
                static_key.public_key.public_key_bytes(),
                &intermediate.private_key,
            )),
        };
        ServerKeys {
            root,
            static_key,
            cert_chain: chain.encode_to_vec(),
        }
    }

    pub fn static_public(&self) -> [u8; 32] {
        self.static_key
            .public_key
            .public_key_bytes()
            .try_into()
            .expect("X25519 key")
    }
}

/// The transport ciphers once the handshake is over, with their counters.
pub(crate) struct Transport {
    read: NoiseCipher,
    write: NoiseCipher,
    read_counter: u32,
    write_counter: u32,
}

impl Transport {
    /// A client frame's plaintext.
    pub fn decrypt(&mut self, frame: &[u8]) -> Result<Vec<u8>, String> {
        let mut buf = frame.to_vec();
        self.read
            .decrypt_in_place_with_counter(self.read_counter, &mut buf)
            .map_err(|e| format!("frame {} does not open: {e}", self.read_counter))?;
        self.read_counter += 1;
        Ok(buf)
    }

    /// A server frame's ciphertext.
    pub fn encrypt(&mut self, plaintext: &[u8]) -> Vec<u8> {
        let out = self
            .write
            .encrypt_with_counter(self.write_counter, plaintext)
            .expect("AES-GCM encrypt");
        self.write_counter += 1;
        out
    }
}

/// What the first client message asked for and the server's answer.
pub(crate) enum Hello {
    /// XX or XXfallback: send `server_hello`, then read the client's finish
    /// with `pending`.
    Full {
        server_hello: Vec<u8>,
        pending: PendingFinish,
        /// The client had tried IK against another static key.
        fallback: bool,
    },
    /// IK accepted: send `server_hello`; the handshake is over.
    Resumed {
        server_hello: Vec<u8>,
        client_static: [u8; 32],
        payload: Vec<u8>,
        transport: Transport,
    },
}

/// An XX (or XXfallback) handshake waiting for the client's finish.
pub(crate) struct PendingFinish {
    noise: NoiseHandshake,
    ephemeral: KeyPair,
}

/// What the client proved in its finish.
pub(crate) struct Finished {
    pub client_static: [u8; 32],
    pub payload: Vec<u8>,
    pub transport: Transport,
}

fn key32(bytes: &[u8], what: &str) -> Result<[u8; 32], String> {
    bytes
        .try_into()
        .map_err(|_| format!("{what} is {} bytes, not 32", bytes.len()))
}

fn split(noise: NoiseHandshake) -> Result<Transport, String> {
    // `finish` names the ciphers from the initiator's side.
    let (client_write, client_read) = noise.finish().map_err(|e| e.to_string())?;
    Ok(Transport {
        read: client_write,
        write: client_read,
        read_counter: 0,
        write_counter: 0,
    })
}

fn server_hello(ephemeral: &[u8], static_ct: Option<Vec<u8>>, payload: Vec<u8>) -> Vec<u8> {
    wa::HandshakeMessage {
        server_hello: waproto::buffa::MessageField::some(wa::handshake_message::ServerHello {
            ephemeral: Some(ephemeral.to_vec()),
            r#static: static_ct,
            payload: Some(payload),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// `<- e, ee, s, es` under `pattern`, the client's ephemeral already known.
fn full_hello(
    keys: &ServerKeys,
    pattern: &str,
    client_ephemeral: &[u8; 32],
) -> Result<(Vec<u8>, PendingFinish), String> {
    let e = |x: wacore::handshake::HandshakeError| x.to_string();
    let mut noise = NoiseHandshake::new(pattern, &WA_CONN_HEADER).map_err(e)?;
    noise.authenticate(client_ephemeral);
    let ephemeral = KeyPair::generate(&mut rand::rng());
    let ephemeral_pub = ephemeral.public_key.public_key_bytes().to_vec();
    noise.authenticate(&ephemeral_pub);
    noise
        .mix_shared_secret(ephemeral.private_key.serialize(), client_ephemeral)
        .map_err(e)?;
    let static_ct = noise.encrypt(&keys.static_public()).map_err(e)?;
    noise
        .mix_shared_secret(keys.static_key.private_key.serialize(), client_ephemeral)
        .map_err(e)?;
    let cert_ct = noise.encrypt(&keys.cert_chain).map_err(e)?;
    Ok((
        server_hello(&ephemeral_pub, Some(static_ct), cert_ct),
        PendingFinish { noise, ephemeral },
    ))
}

/// Answers the client's first handshake message. `refuse_ik` makes the
/// server answer an IK hello as if its static key had rotated.
pub(crate) fn answer_hello(
    keys: &ServerKeys,
    client_hello: &[u8],
    refuse_ik: bool,
) -> Result<Hello, String> {
    let message =
        wa::HandshakeMessage::decode_from_slice(client_hello).map_err(|e| e.to_string())?;
    let hello = message
        .client_hello
        .into_option()
        .ok_or("the first message is not a ClientHello")?;
    let client_ephemeral = key32(
        hello
            .ephemeral
            .as_deref()
            .ok_or("ClientHello without ephemeral")?,
        "client ephemeral",
    )?;
    match (hello.r#static, hello.payload) {
        (Some(static_ct), Some(payload_ct)) => {
            if !refuse_ik {
                if let Ok(done) = resume(keys, &client_ephemeral, &static_ct, &payload_ct) {
                    return Ok(done);
                }
            }
            let (server_hello, pending) =
                full_hello(keys, NOISE_PATTERN_XXFALLBACK, &client_ephemeral)?;
            Ok(Hello::Full {
                server_hello,
                pending,
                fallback: true,
            })
        }
        (None, None) => {
            let (server_hello, pending) = full_hello(keys, NOISE_PATTERN_XX, &client_ephemeral)?;
            Ok(Hello::Full {
                server_hello,
                pending,
                fallback: false,
            })
        }
        _ => Err("ClientHello with a static key but no payload, or the reverse".into()),
    }
}

/// IK: `-> e, es, s, ss` read, `<- e, ee, se` answered.
fn resume(
    keys: &ServerKeys,
    client_ephemeral: &[u8; 32],
    static_ct: &[u8],
    payload_ct: &[u8],
) -> Result<Hello, String> {
    let e = |x: wacore::handshake::HandshakeError| x.to_string();
    let server_static = keys.static_key.private_key.serialize();
    let mut noise = NoiseHandshake::new(NOISE_PATTERN_IK, &WA_CONN_HEADER).map_err(e)?;
    noise.authenticate(&keys.static_public());
    noise.authenticate(client_ephemeral);
    noise
        .mix_shared_secret(server_static, client_ephemeral)
        .map_err(e)?;
    let client_static = key32(&noise.decrypt(static_ct).map_err(e)?, "client static")?;
    noise
        .mix_shared_secret(server_static, &client_static)
        .map_err(e)?;
    let payload = noise.decrypt(payload_ct).map_err(e)?;
    let ephemeral = KeyPair::generate(&mut rand::rng());
    let ephemeral_pub = ephemeral.public_key.public_key_bytes().to_vec();
    noise.authenticate(&ephemeral_pub);
    noise
        .mix_shared_secret(ephemeral.private_key.serialize(), client_ephemeral)
        .map_err(e)?;
    noise
        .mix_shared_secret(ephemeral.private_key.serialize(), &client_static)
        .map_err(e)?;
    let cert_ct = noise.encrypt(&keys.cert_chain).map_err(e)?;
    Ok(Hello::Resumed {
        server_hello: server_hello(&ephemeral_pub, None, cert_ct),
        client_static,
        payload,
        transport: split(noise)?,
    })
}

impl PendingFinish {
    /// `-> s, se`: the client's static key and its `ClientPayload`.
    pub fn finish(mut self, client_finish: &[u8]) -> Result<Finished, String> {
        let e = |x: wacore::handshake::HandshakeError| x.to_string();
        let message =
            wa::HandshakeMessage::decode_from_slice(client_finish).map_err(|x| x.to_string())?;
        let finish = message
            .client_finish
            .into_option()
            .ok_or("the second client message is not a ClientFinish")?;
        let static_ct = finish.r#static.ok_or("ClientFinish without static")?;
        let payload_ct = finish.payload.ok_or("ClientFinish without payload")?;
        let client_static = key32(&self.noise.decrypt(&static_ct).map_err(e)?, "client static")?;
        self.noise
            .mix_shared_secret(self.ephemeral.private_key.serialize(), &client_static)
            .map_err(e)?;
        let payload = self.noise.decrypt(&payload_ct).map_err(e)?;
        Ok(Finished {
            client_static,
            payload,
            transport: split(self.noise)?,
        })
    }
}

/// Strips what precedes the first frame of a connection: the optional edge
/// routing pre-intro (`ED\0\1`, 3-byte length, routing data) and the
/// `WA_CONN_HEADER`. `None` while more bytes are needed.
pub(crate) fn strip_intro(buf: &[u8]) -> Option<Result<usize, String>> {
    let mut at = 0;
    if buf.len() >= 2 && &buf[..2] == b"ED" {
        if buf.len() < 7 {
            return None;
        }
        if &buf[..4] != b"ED\x00\x01" {
            return Some(Err("bad edge routing pre-intro".into()));
        }
        let len = (buf[4] as usize) << 16 | (buf[5] as usize) << 8 | buf[6] as usize;
        at = 7 + len;
    }
    if buf.len() < at + WA_CONN_HEADER.len() {
        return None;
    }
    if buf[at..at + WA_CONN_HEADER.len()] != WA_CONN_HEADER {
        return Some(Err(format!(
            "the connection does not start with WA_CONN_HEADER: {:?}",
            &buf[at..at + WA_CONN_HEADER.len()]
        )));
    }
    Some(Ok(at + WA_CONN_HEADER.len()))
}

/// One 3-byte-length frame off the front of `buf`.
pub(crate) fn take_frame(buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    if buf.len() < 3 {
        return None;
    }
    let len = (buf[0] as usize) << 16 | (buf[1] as usize) << 8 | buf[2] as usize;
    if buf.len() < 3 + len {
        return None;
    }
    let frame = buf[3..3 + len].to_vec();
    buf.drain(..3 + len);
    Some(frame)
}

/// `payload` behind its 3-byte length.
pub(crate) fn frame(payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut out = Vec::with_capacity(3 + len);
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8]);
    out.extend_from_slice(payload);
    out
}
