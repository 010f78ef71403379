//! A local double of WhatsApp Web's multi-device server, for a companion
//! device that links the user's own number (the `whatsapp-rust` 0.7.0
//! client, or a Worker built on it). Written from the protocol as that
//! client speaks it (its sources are the reference for what is sent and
//! awaited: `handshake.rs`, `pair.rs`, `pair_code.rs`, `prekeys.rs`,
//! `send/`, `message/`, `handlers/`, wacore's IQ specs, whose module docs
//! quote WA Web), and from the public descriptions of WhatsApp's
//! multi-device design (the WhatsApp security whitepaper; whatsmeow and
//! Baileys for the server's side of each exchange):
//!
//! - `ws://127.0.0.1:PORT/ws/chat` ([`FakeWhatsAppWeb::ws_url`]): the
//!   connection header, 3-byte frames, Noise XX / IK / XXfallback with a
//!   certificate chain signed by the double's own root
//!   ([`FakeWhatsAppWeb::root_public_key`]), then encrypted binary nodes
//!   (`noise`, `conn`).
//! - Linking (`pairing`): a new device's registration gets six QR refs
//!   (`<pair-device>`); [`FakeWhatsAppWeb::scan_qr`] is the primary phone
//!   scanning one (ADV identity signed with the account key, HMAC'd with the
//!   QR's adv secret, `<pair-success>`), the device's `<pair-device-sign>` is
//!   checked, `<stream:error code="515">` restarts the stream and the device
//!   logs in under its new JID. Refs expire as the device rotates them;
//!   [`FakeWhatsAppWeb::reissue_qr_refs`] (or `_every`) sends fresh ones.
//!   The phone-number code path (`link_code_companion_reg`,
//!   `pair_code`) is [`FakeWhatsAppWeb::link_with_code`].
//! - After `<success>`, what the client asks (`router`, `keys`):
//!   prekeys (upload, count, fetch, digest, rotation), passive/active,
//!   A/B props, usync (devices, LIDs, contacts), blocklist, privacy and
//!   trusted-contact tokens, app-state sync (`appstate`: the phone's key
//!   share and a `critical_block` patch setting the push name), media_conn,
//!   pings.
//! - Accounts and their phones ([`FakeWhatsAppWeb::add_account`]): each
//!   phone is a Signal client (`signal`); contacts' messages go to every
//!   linked device of the recipient, one stanza per device, `pkmsg` first
//!   (`messages`); groups use sender keys (`groups`); media is encrypted
//!   as WhatsApp does and served by the CDN, which also takes uploads
//!   (`media`).
//! - What the device says back (`receipts`): receipts (a message's
//!   receipt is its ack), retry receipts (the phone sends again), chat
//!   states.
//! - Delivery: each stanza for a device stays queued until the device acks
//!   it; a device that reconnects gets what is queued as its offline backlog
//!   (`<offline_preview>`, a primer, `<offline_batch>` pulls,
//!   `<offline count>`).
//! - Faults (`unlink`): [`FakeWhatsAppWeb::drop_socket`],
//!   [`FakeWhatsAppWeb::logout_from_phone`] (`<stream:error><conflict
//!   type="device_removed"/>` now, `<failure reason="401"/>` at the next
//!   login), [`FakeWhatsAppWeb::refuse_ik`], [`FakeWhatsAppWeb::garble_next`].
//!
//! The client builds `https://{host}` media URLs from `<media_conn>`; the
//! CDN here is plain HTTP at [`FakeWhatsAppWeb::media_host`], so the
//! client's HTTP client must send `https://{media_host}/…` there over plain
//! HTTP (a local TLS terminator's job).
//!
//! Like the other fakes it runs on its own runtime, so it answers while a
//! test blocks; the controls may be called from a test's async body.
//! `FAKE_WA_TRACE=1` prints every node in and out.

pub(crate) mod appstate;
pub(crate) mod conn;
pub(crate) mod groups;
pub(crate) mod keys;
pub(crate) mod media;
pub(crate) mod messages;
pub(crate) mod noise;
pub(crate) mod pair_code;
pub(crate) mod pairing;
pub(crate) mod receipts;
pub(crate) mod router;
pub(crate) mod signal;
pub(crate) mod unlink;
pub(crate) mod wire;

use crate::poll::{self, ms};
use rand::RngExt as _;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use wacore_binary::{Jid, Node};

pub use messages::{Media, Received};
pub use receipts::{ChatState, CompanionReceipt};

/// What a connection's writer is told.
pub(crate) enum Out {
    Node(Node),
    /// Close the socket once what is queued before it is written.
    Close,
    /// Drop the socket at once, as a dead network would.
    Drop,
}

/// A companion device, as the server knows it.
pub(crate) struct Companion {
    pub device: u16,
    pub noise: [u8; 32],
    pub identity: [u8; 32],
    pub registration_id: u32,
    pub signed_prekey: (u32, [u8; 32], Vec<u8>),
    /// One-time prekeys uploaded and not yet handed out.
    pub prekeys: BTreeMap<u32, [u8; 32]>,
    /// Every one-time prekey ever uploaded (the digest's list).
    pub uploaded: usize,
    /// A prekey-low notification went out since the last upload.
    pub low_notified: bool,
    /// The device-signed `ADVSignedDeviceIdentity` from `<pair-device-sign>`.
    pub signed_identity: Vec<u8>,
    pub key_index: u32,
    pub platform: String,
    pub removed: bool,
    pub conn: Option<u64>,
    /// Stanzas for the device, kept until it acks them.
    pub outbox: Vec<Pending>,
}

/// A stanza waiting for the device's ack.
pub(crate) struct Pending {
    pub id: String,
    /// The stanza's `from`, which the ack names as `to`.
    pub from: String,
    /// Its `participant` (a group member's receipt), which the ack repeats.
    pub participant: Option<String>,
    pub node: Node,
    /// The connection it went out on, if it went out.
    pub sent_on: Option<u64>,
}

/// A WhatsApp user: the primary phone and its linked devices.
pub(crate) struct Account {
    pub phone: String,
    pub lid: String,
    pub push_name: String,
    pub created: u64,
    pub signal: signal::PhoneSignal,
    pub adv_raw_id: u32,
    pub next_key_index: u32,
    pub next_device: u16,
    pub companions: BTreeMap<u16, Companion>,
    /// The app-state sync key the phone shares with its devices.
    pub app_state_key: appstate::SyncKey,
    pub received: Vec<Received>,
    /// What the phone sent one-to-one (id → recipient, message), for
    /// retry receipts.
    pub sent: HashMap<String, (String, waproto::whatsapp::Message)>,
    /// Garble the ciphertext of the phone's next message (a fault).
    pub garble_next: bool,
    pub receipts: Vec<CompanionReceipt>,
    pub chatstates: Vec<ChatState>,
}

impl Account {
    pub fn pn(&self) -> Jid {
        wire::pn(&self.phone, 0)
    }
    pub fn lid_jid(&self) -> Jid {
        wire::lid(&self.lid, 0)
    }
}

/// One WebSocket.
pub(crate) struct Conn {
    pub tx: UnboundedSender<Out>,
    /// `(phone, device)` once logged in.
    pub device: Option<(String, u16)>,
    pub registration: Option<pairing::Registration>,
    pub active: bool,
    pub offline: conn::Offline,
    /// The Noise pattern its handshake took (`XX`, `IK`, `XXfallback`).
    pub pattern: &'static str,
}

/// A device's login: which Noise pattern its handshake took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Login {
    pub phone: String,
    pub device: u16,
    /// `XX`, `IK` or `XXfallback`.
    pub pattern: String,
}

/// A linked device as the account lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedDevice {
    pub device: u16,
    pub key_index: u32,
    /// The device's `DeviceProps.os` at registration.
    pub platform: String,
}

/// A node in or out, for the tests.
#[derive(Debug, Clone)]
pub struct LoggedNode {
    pub incoming: bool,
    /// `(phone, device)` of the connection, once it logged in.
    pub device: Option<(String, u16)>,
    pub node: Node,
    pub at: Instant,
}

pub(crate) struct World {
    pub keys: noise::ServerKeys,
    pub refuse_ik: bool,
    /// Fresh QR refs to registering devices this often, if set.
    pub reissue_every: Option<Duration>,
    pub media_host: String,
    pub media_auth: String,
    pub accounts: BTreeMap<String, Account>,
    /// LID user → phone.
    pub lids: HashMap<String, String>,
    pub conns: HashMap<u64, Conn>,
    pub next_conn: u64,
    pub next_id: u64,
    /// The CDN: direct path → encrypted file.
    pub media: HashMap<String, Vec<u8>>,
    pub groups: BTreeMap<String, groups::Group>,
    pub log: Vec<LoggedNode>,
    pub logins: Vec<Login>,
    /// IQs the double does not serve (answered 501).
    pub unserved: Vec<Node>,
    pub trace: bool,
}

impl World {
    /// A stanza id, as the server and phones make them.
    pub fn new_id(&mut self) -> String {
        self.next_id += 1;
        let r: u64 = rand::rng().random();
        format!("{:016X}{:08X}", r, self.next_id)
    }

    pub fn account(&self, phone: &str) -> &Account {
        self.accounts
            .get(phone)
            .unwrap_or_else(|| panic!("no account {phone}"))
    }

    pub fn account_mut(&mut self, phone: &str) -> &mut Account {
        self.accounts
            .get_mut(phone)
            .unwrap_or_else(|| panic!("no account {phone}"))
    }

    /// The phone a user JID (PN or LID) belongs to.
    pub fn phone_of(&self, jid: &Jid) -> Option<String> {
        match jid.server {
            wacore_binary::Server::Pn if self.accounts.contains_key(jid.user.as_str()) => {
                Some(jid.user.to_string())
            }
            wacore_binary::Server::Lid => self.lids.get(jid.user.as_str()).cloned(),
            _ => None,
        }
    }

    /// Writes `node` to connection `conn`, logging it.
    pub fn send(&mut self, conn: u64, node: Node) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        if self.trace {
            eprintln!("[fake-wa {conn} ->]\n{}", wire::render(&node));
        }
        self.log.push(LoggedNode {
            incoming: false,
            device: c.device.clone(),
            node: node.clone(),
            at: Instant::now(),
        });
        let _ = c.tx.send(Out::Node(node));
    }

    pub fn close(&mut self, conn: u64, out: Out) {
        if let Some(c) = self.conns.get(&conn) {
            let _ = c.tx.send(out);
        }
    }
}

pub(crate) struct Shared {
    pub world: Mutex<World>,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The double. Dropping it stops its runtime.
pub struct FakeWhatsAppWeb {
    shared: Arc<Shared>,
    ws_addr: SocketAddr,
    media_addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for FakeWhatsAppWeb {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

const WAIT: Duration = Duration::from_secs(30);

impl FakeWhatsAppWeb {
    pub fn start() -> FakeWhatsAppWeb {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-whatsapp-web")
            .enable_all()
            .build()
            .expect("fake WhatsApp Web runtime");
        let (ws, http) = {
            let _context = runtime.enter();
            (
                crate::fake_discord::loopback_listener(),
                crate::fake_discord::loopback_listener(),
            )
        };
        let ws_addr = ws.local_addr().expect("ws address");
        let media_addr = http.local_addr().expect("media address");
        let auth: [u8; 24] = rand::rng().random();
        let shared = Arc::new(Shared {
            world: Mutex::new(World {
                keys: noise::ServerKeys::generate(),
                refuse_ik: false,
                reissue_every: None,
                media_host: media_addr.to_string(),
                media_auth: media::b64url(&auth),
                accounts: BTreeMap::new(),
                lids: HashMap::new(),
                conns: HashMap::new(),
                next_conn: 0,
                next_id: 0,
                media: HashMap::new(),
                groups: BTreeMap::new(),
                log: Vec::new(),
                logins: Vec::new(),
                unserved: Vec::new(),
                trace: std::env::var_os("FAKE_WA_TRACE").is_some(),
            }),
        });
        runtime.spawn(conn::serve(ws, shared.clone()));
        runtime.spawn(media::serve(http, shared.clone()));
        let ticking = shared.clone();
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(50)).await;
                ticking.lock().reissue_due();
            }
        });
        FakeWhatsAppWeb {
            shared,
            ws_addr,
            media_addr,
            runtime: Some(runtime),
        }
    }

    fn lock(&self) -> MutexGuard<'_, World> {
        self.shared.lock()
    }

    /// `ws://127.0.0.1:PORT/ws/chat`, where the client's
    /// `wss://web.whatsapp.com/ws/chat` goes.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws/chat", self.ws_addr)
    }

    /// `127.0.0.1:PORT`: the media host `<media_conn>` names (plain HTTP).
    pub fn media_host(&self) -> String {
        self.media_addr.to_string()
    }

    /// The key the double's certificate chain is rooted in (the client's
    /// `WA_CERT_PUB_KEY` would have to be this for it to verify).
    pub fn root_public_key(&self) -> [u8; 32] {
        self.lock()
            .keys
            .root
            .public_key
            .public_key_bytes()
            .try_into()
            .expect("X25519 key")
    }

    /// The server's Noise static key (what a client caches for IK).
    pub fn server_static_key(&self) -> [u8; 32] {
        self.lock().keys.static_public()
    }

    /// Answer IK hellos as if the server static key had rotated
    /// (XXfallback) while `on`.
    pub fn refuse_ik(&self, on: bool) {
        self.lock().refuse_ik = on;
    }

    // ---- the world ----

    /// A WhatsApp user with a primary phone; `phone` is E.164 digits. The
    /// push name is "User {last four digits}".
    pub fn add_account(&self, phone: &str) {
        let name = format!("User {}", &phone[phone.len().saturating_sub(4)..]);
        self.add_account_named(phone, &name);
    }

    pub fn add_account_named(&self, phone: &str, push_name: &str) {
        assert!(
            !phone.is_empty() && phone.bytes().all(|b| b.is_ascii_digit()),
            "phone must be E.164 digits: {phone}"
        );
        let mut w = self.lock();
        assert!(!w.accounts.contains_key(phone), "account {phone} exists");
        let mut rng = rand::rng();
        let lid = loop {
            let candidate = format!(
                "{}",
                rng.random_range(100_000_000_000_000u64..999_999_999_999_999)
            );
            if !w.lids.contains_key(&candidate) {
                break candidate;
            }
        };
        w.lids.insert(lid.clone(), phone.to_string());
        w.accounts.insert(
            phone.to_string(),
            Account {
                phone: phone.to_string(),
                lid,
                push_name: push_name.to_string(),
                created: noise::now_secs(),
                signal: signal::PhoneSignal::new(),
                adv_raw_id: rng.random(),
                next_key_index: 1,
                next_device: 2,
                companions: BTreeMap::new(),
                app_state_key: appstate::SyncKey::generate(),
                received: Vec::new(),
                sent: HashMap::new(),
                garble_next: false,
                receipts: Vec::new(),
                chatstates: Vec::new(),
            },
        );
    }

    /// The account's LID user (`{lid}@lid`).
    pub fn lid(&self, phone: &str) -> String {
        self.lock().account(phone).lid.clone()
    }

    // ---- inspection ----

    /// Whether a linked device of `phone` has a logged-in socket.
    pub fn connected(&self, phone: &str) -> bool {
        let w = self.lock();
        w.accounts.get(phone).is_some_and(|a| {
            a.companions
                .values()
                .any(|c| !c.removed && c.conn.is_some_and(|id| w.conns.contains_key(&id)))
        })
    }

    /// The linked devices of `phone` (device ids), unlinked ones left out.
    pub fn companions(&self, phone: &str) -> Vec<u16> {
        let w = self.lock();
        w.accounts
            .get(phone)
            .map(|a| {
                a.companions
                    .values()
                    .filter(|c| !c.removed)
                    .map(|c| c.device)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A linked device of `phone`, unlinked or not.
    pub fn linked_device(&self, phone: &str, device: u16) -> Option<LinkedDevice> {
        self.lock()
            .account(phone)
            .companions
            .get(&device)
            .map(|c| LinkedDevice {
                device: c.device,
                key_index: c.key_index,
                platform: c.platform.clone(),
            })
    }

    /// Every login of `phone`'s devices so far, in order.
    pub fn logins(&self, phone: &str) -> Vec<Login> {
        self.lock()
            .logins
            .iter()
            .filter(|l| l.phone == phone)
            .cloned()
            .collect()
    }

    /// What `phone`'s phone received from a linked device (its own or a
    /// contact's), in order.
    pub fn received(&self, phone: &str) -> Vec<Received> {
        self.lock().account(phone).received.clone()
    }

    /// Receipts the linked device sent for `phone`'s messages.
    pub fn receipts_from_companion(&self, phone: &str) -> Vec<CompanionReceipt> {
        self.lock().account(phone).receipts.clone()
    }

    /// Chat states (`composing`, `paused`, …) a linked device sent to `phone`.
    pub fn chatstates(&self, phone: &str) -> Vec<ChatState> {
        self.lock().account(phone).chatstates.clone()
    }

    /// Every node in and out so far, in order.
    pub fn nodes(&self) -> Vec<LoggedNode> {
        self.lock().log.clone()
    }

    /// Nodes the devices sent with this tag.
    pub fn nodes_from_devices(&self, tag: &str) -> Vec<Node> {
        self.lock()
            .log
            .iter()
            .filter(|l| l.incoming && l.node.tag == tag)
            .map(|l| l.node.clone())
            .collect()
    }

    /// IQs the double answered with 501 (nothing it serves).
    pub fn unserved_iqs(&self) -> Vec<String> {
        self.lock().unserved.iter().map(wire::render).collect()
    }

    /// Stanzas queued for `phone`'s device that it has not acked.
    pub fn unacked(&self, phone: &str, device: u16) -> usize {
        self.lock()
            .account(phone)
            .companions
            .get(&device)
            .map_or(0, |c| c.outbox.len())
    }

    // ---- waits ----

    /// Waits until a linked device of `phone` is logged in.
    pub fn wait_connected(&self, phone: &str) {
        poll::until_blocking(WAIT, ms(20), || {
            self.connected(phone)
                .then_some(())
                .ok_or_else(|| format!("no logged-in device of {phone}"))
        });
    }

    /// Waits until `phone` has no logged-in device.
    pub fn wait_disconnected(&self, phone: &str) {
        poll::until_blocking(WAIT, ms(20), || {
            (!self.connected(phone))
                .then_some(())
                .ok_or_else(|| format!("a device of {phone} is still logged in"))
        });
    }

    /// Waits until `phone`'s phone has received `n` messages; all of them.
    pub fn wait_received(&self, phone: &str, n: usize) -> Vec<Received> {
        poll::until_blocking(WAIT, ms(20), || {
            let got = self.received(phone);
            if got.len() >= n {
                Ok(got)
            } else {
                Err(format!("{} of {n} messages: {got:?}", got.len()))
            }
        })
    }

    /// Waits until `probe` finds what it looks for in the companion's
    /// receipts for `phone`.
    pub fn wait_receipt(
        &self,
        phone: &str,
        mut probe: impl FnMut(&CompanionReceipt) -> bool,
    ) -> CompanionReceipt {
        poll::until_blocking(WAIT, ms(20), || {
            let all = self.receipts_from_companion(phone);
            all.iter()
                .find(|r| probe(r))
                .cloned()
                .ok_or_else(|| format!("receipts so far: {all:?}"))
        })
    }

    /// Waits until the companion sent `state` to `phone`.
    pub fn wait_chatstate(&self, phone: &str, state: &str) -> ChatState {
        poll::until_blocking(WAIT, ms(20), || {
            let all = self.chatstates(phone);
            all.iter()
                .find(|c| c.state == state)
                .cloned()
                .ok_or_else(|| format!("chat states so far: {all:?}"))
        })
    }

    /// Waits until `phone`'s device `device` has acked everything queued.
    pub fn wait_all_acked(&self, phone: &str, device: u16) {
        poll::until_blocking(WAIT, ms(20), || match self.unacked(phone, device) {
            0 => Ok(()),
            n => Err(format!("{n} stanzas not acked")),
        });
    }
}
