//! The simulated phones' end-to-end encryption: each primary phone is a
//! Signal client (wacore-libsignal's double ratchet and sender keys over an
//! in-memory store) with its own identity, signed prekey and one-time
//! prekeys, as a real phone publishes them. WhatsApp's additions, from the
//! public descriptions of its protocol (the whitepaper, whatsmeow,
//! Baileys): the serialized `Message` protobuf is padded with 1-16 bytes,
//! each byte the pad's length, before it is encrypted; `<enc v="2"
//! type="pkmsg|msg|skmsg">` names the Signal message kind.
//!
//! The store's async methods never wait on anything, so the double runs
//! them to completion in place (`futures::executor::block_on`) under its
//! state lock.

use rand::RngExt as _;
use std::collections::HashMap;
use wacore::libsignal::protocol::{
    self as sig, CiphertextMessage, Direction, GenericSignedPreKey as _, IdentityChange,
    IdentityKey, IdentityKeyPair, IdentityKeyStore, KeyPair, PreKeyBundle, PreKeyId, PreKeyRecord,
    PreKeySignalMessage, PreKeyStore, ProtocolAddress, SenderKeyDistributionMessage, SenderKeyName,
    SenderKeyRecord, SenderKeyStore, SessionRecord, SessionStore, SignalMessage,
    SignalProtocolError, SignedPreKeyId, SignedPreKeyRecord, SignedPreKeyStore, Timestamp,
    UsePQRatchet,
};

type Result<T> = std::result::Result<T, SignalProtocolError>;

/// One phone's Signal state.
pub(crate) struct PhoneSignal {
    pub identity: IdentityKeyPair,
    pub registration_id: u32,
    pub signed_prekey_id: u32,
    identities: HashMap<String, IdentityKey>,
    sessions: HashMap<String, SessionRecord>,
    prekeys: HashMap<u32, PreKeyRecord>,
    signed: HashMap<u32, SignedPreKeyRecord>,
    sender_keys: HashMap<String, SenderKeyRecord>,
    next_prekey: u32,
}

/// A prekey bundle as the server hands it out (`<user>` of an `encrypt`
/// fetch): public halves only.
#[derive(Clone, Debug)]
pub(crate) struct Bundle {
    pub registration_id: u32,
    pub identity: [u8; 32],
    pub prekey: Option<(u32, [u8; 32])>,
    pub signed_prekey: (u32, [u8; 32], Vec<u8>),
}

impl PhoneSignal {
    pub fn new() -> PhoneSignal {
        let mut rng = rand::rng();
        let identity = IdentityKeyPair::generate(&mut rng);
        let signed_prekey_id = 1;
        let pair = KeyPair::generate(&mut rng);
        let signature = identity
            .private_key()
            .calculate_signature(&pair.public_key.serialize(), &mut rng)
            .expect("signed prekey signature");
        let record = SignedPreKeyRecord::new(
            SignedPreKeyId::from(signed_prekey_id),
            Timestamp::from_epoch_millis(super::noise::now_secs() * 1000),
            &pair,
            &signature,
        );
        let mut signed = HashMap::new();
        signed.insert(signed_prekey_id, record);
        PhoneSignal {
            identity,
            registration_id: rng.random_range(1..16_380),
            signed_prekey_id,
            identities: HashMap::new(),
            sessions: HashMap::new(),
            prekeys: HashMap::new(),
            signed,
            sender_keys: HashMap::new(),
            next_prekey: 1,
        }
    }

    pub fn identity_public(&self) -> [u8; 32] {
        self.identity
            .public_key()
            .public_key_bytes()
            .try_into()
            .expect("X25519 key")
    }

    /// A bundle with a fresh one-time prekey, as the server would hand out
    /// one of the phone's uploaded keys.
    pub fn bundle(&mut self) -> Bundle {
        let id = self.next_prekey;
        self.next_prekey += 1;
        let pair = KeyPair::generate(&mut rand::rng());
        self.prekeys
            .insert(id, PreKeyRecord::new(PreKeyId::from(id), &pair));
        let signed = &self.signed[&self.signed_prekey_id];
        Bundle {
            registration_id: self.registration_id,
            identity: self.identity_public(),
            prekey: Some((id, key32(pair.public_key.public_key_bytes()))),
            signed_prekey: (
                self.signed_prekey_id,
                key32(
                    signed
                        .public_key()
                        .expect("signed prekey")
                        .public_key_bytes(),
                ),
                signed.signature().expect("signature"),
            ),
        }
    }

    pub fn has_session(&self, with: &ProtocolAddress) -> bool {
        self.sessions
            .get(with.as_str())
            .is_some_and(|r| r.session_state().is_some())
    }

    /// Starts a session with `with` from its published bundle (X3DH).
    pub fn start_session(&mut self, with: &ProtocolAddress, bundle: &Bundle) -> Result<()> {
        let b = PreKeyBundle::new(
            bundle.registration_id,
            with.device_id(),
            bundle
                .prekey
                .map(|(id, k)| (PreKeyId::from(id), public(&k))),
            SignedPreKeyId::from(bundle.signed_prekey.0),
            public(&bundle.signed_prekey.1),
            bundle.signed_prekey.2.clone(),
            IdentityKey::new(public(&bundle.identity)),
        )?;
        let mut identities = Identities {
            own: &self.identity,
            registration_id: self.registration_id,
            known: &mut self.identities,
        };
        let mut sessions = Sessions(&mut self.sessions);
        futures::executor::block_on(sig::process_prekey_bundle(
            with,
            &mut sessions,
            &mut identities,
            &b,
            &mut rand::rng(),
            UsePQRatchet::No,
        ))?;
        Ok(())
    }

    /// `plaintext` for `with`: (`pkmsg` or `msg`, ciphertext).
    pub fn encrypt(
        &mut self,
        with: &ProtocolAddress,
        plaintext: &[u8],
    ) -> Result<(&'static str, Vec<u8>)> {
        let mut identities = Identities {
            own: &self.identity,
            registration_id: self.registration_id,
            known: &mut self.identities,
        };
        let mut sessions = Sessions(&mut self.sessions);
        let ct = futures::executor::block_on(sig::message_encrypt(
            plaintext,
            with,
            &mut sessions,
            &mut identities,
        ))?;
        let kind = match ct {
            CiphertextMessage::PreKeySignalMessage(_) => "pkmsg",
            _ => "msg",
        };
        Ok((kind, ct.serialize().to_vec()))
    }

    /// A `pkmsg` or `msg` from `with`.
    pub fn decrypt(&mut self, with: &ProtocolAddress, kind: &str, ct: &[u8]) -> Result<Vec<u8>> {
        let message = match kind {
            "pkmsg" => CiphertextMessage::PreKeySignalMessage(PreKeySignalMessage::try_from(ct)?),
            "msg" => CiphertextMessage::SignalMessage(SignalMessage::try_from(ct)?),
            other => {
                return Err(SignalProtocolError::InvalidArgument(format!(
                    "not a session message: {other}"
                )))
            }
        };
        let mut identities = Identities {
            own: &self.identity,
            registration_id: self.registration_id,
            known: &mut self.identities,
        };
        let mut sessions = Sessions(&mut self.sessions);
        let mut prekeys = PreKeys(&mut self.prekeys);
        let signed = Signed(&self.signed);
        let result = futures::executor::block_on(sig::message_decrypt(
            &message,
            with,
            &mut sessions,
            &mut identities,
            &mut prekeys,
            &signed,
            &mut rand::rng(),
            UsePQRatchet::No,
        ))?;
        if let Some(id) = result.consumed_prekey_id {
            self.prekeys.remove(&u32::from(id));
        }
        Ok(result.plaintext)
    }

    /// This phone's sender key for `group` (created on first use) as the
    /// distribution message its members need.
    pub fn sender_key_distribution(&mut self, name: &SenderKeyName) -> Result<Vec<u8>> {
        let mut store = SenderKeys(&mut self.sender_keys);
        let skdm = futures::executor::block_on(sig::create_sender_key_distribution_message(
            name,
            &mut store,
            &mut rand::rng(),
        ))?;
        Ok(skdm.serialized().to_vec())
    }

    pub fn group_encrypt(&mut self, name: &SenderKeyName, plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut store = SenderKeys(&mut self.sender_keys);
        let skm = futures::executor::block_on(sig::group_encrypt(
            &mut store,
            name,
            plaintext,
            &mut rand::rng(),
        ))?;
        Ok(skm.serialized().to_vec())
    }

    /// Takes in a member's sender key (from its distribution message).
    pub fn process_distribution(&mut self, name: &SenderKeyName, skdm: &[u8]) -> Result<()> {
        let skdm = SenderKeyDistributionMessage::try_from(skdm)?;
        let mut store = SenderKeys(&mut self.sender_keys);
        futures::executor::block_on(sig::process_sender_key_distribution_message(
            name, &skdm, &mut store,
        ))
    }

    pub fn group_decrypt(&mut self, name: &SenderKeyName, ct: &[u8]) -> Result<Vec<u8>> {
        let mut store = SenderKeys(&mut self.sender_keys);
        futures::executor::block_on(sig::group_decrypt(ct, &mut store, name))
    }
}

fn key32(b: &[u8]) -> [u8; 32] {
    b.try_into().expect("32-byte key")
}

fn public(k: &[u8; 32]) -> sig::PublicKey {
    sig::PublicKey::from_djb_public_key_bytes(k).expect("X25519 public key")
}

/// WhatsApp's padding: 1-16 bytes, each the pad's length.
pub(crate) fn pad(mut plaintext: Vec<u8>) -> Vec<u8> {
    let n = rand::rng().random_range(1..=16u8);
    plaintext.extend(std::iter::repeat_n(n, n as usize));
    plaintext
}

pub(crate) fn unpad(mut plaintext: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
    let n = *plaintext.last().ok_or("empty plaintext")? as usize;
    if n == 0
        || n > plaintext.len()
        || plaintext[plaintext.len() - n..]
            .iter()
            .any(|b| *b as usize != n)
    {
        return Err(format!("bad padding (last byte {n})"));
    }
    plaintext.truncate(plaintext.len() - n);
    Ok(plaintext)
}

struct Identities<'a> {
    own: &'a IdentityKeyPair,
    registration_id: u32,
    known: &'a mut HashMap<String, IdentityKey>,
}

#[async_trait::async_trait]
impl IdentityKeyStore for Identities<'_> {
    async fn get_identity_key_pair(&self) -> Result<IdentityKeyPair> {
        Ok(self.own.clone())
    }
    async fn get_local_registration_id(&self) -> Result<u32> {
        Ok(self.registration_id)
    }
    async fn save_identity(
        &mut self,
        a: &ProtocolAddress,
        k: &IdentityKey,
    ) -> Result<IdentityChange> {
        let changed = self
            .known
            .insert(a.as_str().to_string(), *k)
            .is_some_and(|old| old != *k);
        Ok(IdentityChange::from_changed(changed))
    }
    async fn is_trusted_identity(
        &self,
        _: &ProtocolAddress,
        _: &IdentityKey,
        _: Direction,
    ) -> Result<bool> {
        // WhatsApp trusts on first use and on change (it shows a notice).
        Ok(true)
    }
    async fn get_identity(&self, a: &ProtocolAddress) -> Result<Option<IdentityKey>> {
        Ok(self.known.get(a.as_str()).copied())
    }
}

struct Sessions<'a>(&'a mut HashMap<String, SessionRecord>);

#[async_trait::async_trait]
impl SessionStore for Sessions<'_> {
    async fn load_session(&self, a: &ProtocolAddress) -> Result<Option<SessionRecord>> {
        Ok(self.0.get(a.as_str()).cloned())
    }
    async fn has_session(&self, a: &ProtocolAddress) -> Result<bool> {
        Ok(self.0.contains_key(a.as_str()))
    }
    async fn store_session(&mut self, a: &ProtocolAddress, r: SessionRecord) -> Result<()> {
        self.0.insert(a.as_str().to_string(), r);
        Ok(())
    }
}

struct PreKeys<'a>(&'a mut HashMap<u32, PreKeyRecord>);

#[async_trait::async_trait]
impl PreKeyStore for PreKeys<'_> {
    async fn get_pre_key(&self, id: PreKeyId) -> Result<PreKeyRecord> {
        self.0
            .get(&u32::from(id))
            .cloned()
            .ok_or(SignalProtocolError::InvalidPreKeyId)
    }
    async fn save_pre_key(&mut self, id: PreKeyId, r: &PreKeyRecord) -> Result<()> {
        self.0.insert(u32::from(id), r.clone());
        Ok(())
    }
    async fn remove_pre_key(&mut self, id: PreKeyId) -> Result<()> {
        self.0.remove(&u32::from(id));
        Ok(())
    }
}

struct Signed<'a>(&'a HashMap<u32, SignedPreKeyRecord>);

#[async_trait::async_trait]
impl SignedPreKeyStore for Signed<'_> {
    async fn get_signed_pre_key(&self, id: SignedPreKeyId) -> Result<SignedPreKeyRecord> {
        self.0
            .get(&u32::from(id))
            .cloned()
            .ok_or(SignalProtocolError::InvalidSignedPreKeyId)
    }
    async fn save_signed_pre_key(
        &mut self,
        _: SignedPreKeyId,
        _: &SignedPreKeyRecord,
    ) -> Result<()> {
        Ok(())
    }
}

struct SenderKeys<'a>(&'a mut HashMap<String, SenderKeyRecord>);

#[async_trait::async_trait]
impl SenderKeyStore for SenderKeys<'_> {
    async fn store_sender_key(&mut self, name: &SenderKeyName, r: SenderKeyRecord) -> Result<()> {
        self.0.insert(name.cache_key().to_string(), r);
        Ok(())
    }
    async fn load_sender_key(&self, name: &SenderKeyName) -> Result<Option<SenderKeyRecord>> {
        Ok(self.0.get(name.cache_key()).cloned())
    }
}
