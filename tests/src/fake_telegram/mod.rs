//! A fake Telegram Bot API on loopback, written from the official
//! documentation (core.telegram.org/bots/api) and, where the documentation
//! leaves the wording open, the Bot API server's own answers (its source,
//! tdlib/telegram-bot-api, and TDLib's HTML parser):
//!
//! - `POST|GET /bot{token}/{method}` with parameters in the query string,
//!   `application/json`, `application/x-www-form-urlencoded` or
//!   `multipart/form-data` (uploads); method names are case-insensitive;
//!   object parameters (`reply_parameters`, `reply_markup`,
//!   `allowed_updates`) are JSON, serialized as text in forms. A token not
//!   of the `id:secret` form is `404 Not Found`, an unknown one `401
//!   Unauthorized`, an unknown method `404 Not Found`. Answers are
//!   `{"ok":true,"result":…}` or `{"ok":false,"error_code":…,"description":…}`.
//! - `getMe`, `setWebhook` / `deleteWebhook` / `getWebhookInfo`,
//!   `getUpdates` (long polling, `offset` confirms, `409 Conflict` while a
//!   webhook is set or when another `getUpdates` takes over),
//!   `sendMessage` (HTML parse mode, 4 096 characters after parsing,
//!   `reply_parameters`, forum topics, inline keyboards), `sendChatAction`,
//!   `getFile` and `GET /file/bot{token}/{file_path}` (20 MB), uploads by
//!   `sendPhoto` / `sendDocument` / `sendVoice` / `sendAudio` / `sendVideo`
//!   (captions of 1 024 after parsing), `answerCallbackQuery`, and a few
//!   housekeeping methods (`setMyCommands`, `getMyCommands`,
//!   `deleteMyCommands`, `getChat`, `deleteMessage`).
//! - Updates carry rising `update_id`s. With a webhook set, each is POSTed
//!   to its URL with `X-Telegram-Bot-Api-Secret-Token` and sent again until
//!   the webhook answers 2xx (the updates of one chat in order, one at a
//!   time); without one they wait for `getUpdates`. As a local Bot API
//!   server allows, the webhook may be plain `http://` on any port.
//! - Group chats follow privacy mode (on by default, as for a new bot): the
//!   bot hears commands, mentions of its username and replies to its own
//!   messages (a command addressed to another bot, `/cmd@other_bot`, is not
//!   its), nothing else. Messages in a forum topic carry
//!   `message_thread_id`, `is_topic_message` and, as Telegram sends them, a
//!   `reply_to_message` naming the topic's first message.
//!
//! ```text
//! let tg = FakeTelegram::start();
//! // channel Worker: TELEGRAM_API_BASE = tg.api_base(), its token BOT_TOKEN
//! let hello = tg.user_says(&ANN, "hello");
//! let answer = tg.wait_sent(1)[0].clone();
//! ```
//!
//! Like the other fakes it runs on its own runtime, so it answers while a
//! test blocks; the controls may be called from a test's async body.

mod api;
mod delivery;
pub mod html;

use crate::poll::{self, ms};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The bot's token (`{bot id}:{secret}`, as BotFather gives one).
pub const BOT_TOKEN: &str = "7012345678:AAFakeTelegramBotTokenForGsvTests_x-1";
/// The bot's user id (the token's first part).
pub const BOT_ID: i64 = 7_012_345_678;
pub const BOT_USERNAME: &str = "gsv_test_bot";
pub const BOT_FIRST_NAME: &str = "gsv";

/// Telegram's limits, in characters (Unicode scalars: measured on the live
/// API, 4 096 emoji pass and 4 097 do not, though entity offsets count
/// UTF-16 units).
pub const MAX_TEXT_CHARS: usize = 4096;
pub const MAX_CAPTION_CHARS: usize = 1024;
pub const MAX_CALLBACK_DATA_BYTES: usize = 64;
/// `getFile` serves files up to 20 MB.
pub const MAX_DOWNLOAD_BYTES: usize = 20 << 20;
/// Uploads by `multipart/form-data`: photos to 10 MB, other files to 50 MB.
pub const MAX_PHOTO_UPLOAD_BYTES: usize = 10 << 20;
pub const MAX_UPLOAD_BYTES: usize = 50 << 20;

/// Someone on Telegram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Person {
    pub id: i64,
    pub first_name: &'static str,
    pub last_name: Option<&'static str>,
    pub username: Option<&'static str>,
}

pub const ANN: Person = Person {
    id: 424_242_001,
    first_name: "Ann",
    last_name: Some("Lee"),
    username: Some("ann"),
};
pub const BOB: Person = Person {
    id: 424_242_002,
    first_name: "Bob",
    last_name: None,
    username: Some("bob_b"),
};
/// Someone without a username.
pub const CAROL: Person = Person {
    id: 424_242_003,
    first_name: "Carol",
    last_name: None,
    username: None,
};

impl Person {
    /// As the Bot API writes a `User`.
    pub fn user(&self) -> Value {
        let mut u = json!({"id": self.id, "is_bot": false, "first_name": self.first_name});
        if let Some(l) = self.last_name {
            u["last_name"] = json!(l);
        }
        if let Some(n) = self.username {
            u["username"] = json!(n);
        }
        u["language_code"] = json!("en");
        u
    }

    /// Their private chat with the bot, as a `Chat`.
    pub fn private_chat(&self) -> Value {
        let mut c = json!({"id": self.id, "first_name": self.first_name});
        if let Some(l) = self.last_name {
            c["last_name"] = json!(l);
        }
        if let Some(n) = self.username {
            c["username"] = json!(n);
        }
        c["type"] = json!("private");
        c
    }
}

/// The bot's `User`, as messages name it.
pub fn bot_user() -> Value {
    json!({"id": BOT_ID, "is_bot": true, "first_name": BOT_FIRST_NAME, "username": BOT_USERNAME})
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatKind {
    Private,
    Group,
    Supergroup,
}

pub(crate) struct Chat {
    pub json: Value,
    pub kind: ChatKind,
    pub forum: bool,
    pub next_message_id: i64,
    /// Every message in the chat (people's and the bot's), by id.
    pub messages: BTreeMap<i64, Value>,
    /// Forum topics: thread id → name.
    pub topics: HashMap<i64, String>,
}

/// A file Telegram holds: one people sent, or one the bot uploaded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFile {
    pub file_id: String,
    pub file_unique_id: String,
    /// Where `/file/bot{token}/…` serves it (`photos/file_3.jpg`).
    pub file_path: String,
    pub bytes: Arc<Vec<u8>>,
    pub mime_type: Option<String>,
    pub file_name: Option<String>,
}

/// One Bot API request and the fake's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `GET` or `POST`.
    pub http_method: String,
    /// As written in the URL (`sendMessage`).
    pub method: String,
    /// The parameters: JSON values from a JSON body, strings otherwise.
    pub args: Value,
    /// Files of a `multipart/form-data` body (field, file name, type, size).
    pub files: Vec<Value>,
    pub content_type: String,
    pub status: u16,
    pub response: Value,
    /// When the request's head arrived.
    pub at: Instant,
}

impl Call {
    /// A parameter as text (a JSON body's non-string values serialized).
    pub fn arg(&self, name: &str) -> Option<String> {
        match &self.args[name] {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            v => Some(v.to_string()),
        }
    }

    /// A parameter that carries JSON (`reply_parameters`, `reply_markup`).
    pub fn json_arg(&self, name: &str) -> Value {
        match &self.args[name] {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
            v => v.clone(),
        }
    }
}

/// A file that went out with a message.
#[derive(Debug, Clone, PartialEq)]
pub struct SentFile {
    /// `photo`, `document`, `voice`, `audio` or `video`.
    pub kind: String,
    pub file_id: String,
    /// The upload's file name and type (`None` when sent by `file_id`).
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub bytes: Arc<Vec<u8>>,
}

/// A message the bot sent that Telegram accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    /// As called (`sendMessage`, `sendPhoto`, …).
    pub method: String,
    pub chat_id: i64,
    pub message_id: i64,
    pub thread_id: Option<i64>,
    /// As given (`HTML`), if any.
    pub parse_mode: Option<String>,
    /// `text` or `caption` as the bot wrote it.
    pub raw_text: Option<String>,
    /// What people see: the text after parsing and trimming.
    pub text: Option<String>,
    pub entities: Vec<Value>,
    /// The message it answers, when it is a reply.
    pub reply_to: Option<i64>,
    pub reply_markup: Option<Value>,
    pub file: Option<SentFile>,
    /// The `Message` Telegram answered.
    pub message: Value,
}

/// A `sendChatAction` Telegram took.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatAction {
    pub chat_id: i64,
    pub thread_id: Option<i64>,
    pub action: String,
    pub at: Instant,
}

/// An `answerCallbackQuery` Telegram took.
#[derive(Debug, Clone, PartialEq)]
pub struct CallbackAnswer {
    pub callback_query_id: String,
    pub text: Option<String>,
    pub show_alert: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryKind {
    /// Telegram delivering a queued update (and its retries).
    Update,
    /// The test repeating an update Telegram had delivered.
    Redelivery,
    /// The test posting as someone who is not Telegram.
    Forged,
}

/// One POST to the webhook.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub kind: DeliveryKind,
    pub update_id: Option<i64>,
    pub body: Value,
    /// The `X-Telegram-Bot-Api-Secret-Token` header sent.
    pub secret: Option<String>,
    /// What the webhook answered (0: no answer, or none in time).
    pub status: u16,
    pub at: Instant,
}

/// The webhook as `setWebhook` left it.
#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub url: String,
    pub secret_token: Option<String>,
    pub max_connections: u32,
}

/// A person's message as the fake made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Inbound {
    pub chat_id: i64,
    pub message_id: i64,
    /// `None`: Telegram would not give it to the bot (privacy mode, or a
    /// type left out of `allowed_updates`).
    pub update_id: Option<i64>,
    pub message: Value,
}

impl Inbound {
    /// The id the channel hands the gateway: `{chat id}:{message id}`.
    pub fn channel_id(&self) -> String {
        format!("{}:{}", self.chat_id, self.message_id)
    }
}

/// A scripted failure of a method's next calls.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub method: String,
    pub left: u32,
    pub status: u16,
    pub description: String,
    pub retry_after: Option<u64>,
}

/// An update waiting for the bot.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub update_id: i64,
    /// Updates of one chat go out one at a time, in order.
    pub queue: i64,
    pub body: Value,
}

pub(crate) struct CallbackQuery {
    pub answered: bool,
}

pub(crate) struct State {
    pub bot_can_read_all: bool,
    pub chats: HashMap<i64, Chat>,
    pub next_message_base: i64,
    pub blocked: HashSet<i64>,
    pub next_update_id: i64,
    pub pending: Vec<Pending>,
    /// Every update ever made, for redelivery.
    pub updates: HashMap<i64, Value>,
    /// `None`: Telegram's default (all but `chat_member`,
    /// `message_reaction`, `message_reaction_count`).
    pub allowed_updates: Option<Vec<String>>,
    pub webhook: Option<Webhook>,
    pub last_set_webhook: Option<Instant>,
    pub webhook_error: Option<(i64, String)>,
    pub webhook_timeout: Duration,
    /// Chat queues with a delivery task running.
    pub delivering: HashSet<i64>,
    pub deliveries: Vec<Delivery>,
    /// The long poll holding the bot's updates, and polls told to end.
    pub poll_owner: Option<u64>,
    pub poll_counter: u64,
    pub poll_ended: HashMap<u64, &'static str>,
    pub last_get_updates: Option<(i64, Instant)>,
    pub files: HashMap<String, StoredFile>,
    pub next_file: u64,
    pub calls: Vec<Call>,
    pub sent: Vec<SentMessage>,
    pub actions: Vec<ChatAction>,
    pub callback_queries: HashMap<String, CallbackQuery>,
    pub next_callback: u64,
    pub answers: Vec<CallbackAnswer>,
    pub failures: Vec<Failure>,
    /// Flood waits a 429 started, by chat (0: not about a chat).
    pub flood_until: HashMap<i64, Instant>,
    pub commands: Value,
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    /// Rung when updates arrive or the long poll must end.
    pub updates: tokio::sync::Notify,
    pub handle: tokio::runtime::Handle,
}

impl Shared {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

pub struct FakeTelegram {
    shared: Arc<Shared>,
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for FakeTelegram {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

pub(crate) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl FakeTelegram {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-telegram")
            .enable_all()
            .build()
            .expect("fake Telegram runtime");
        let listener = {
            let _context = runtime.enter();
            crate::fake_discord::loopback_listener()
        };
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                bot_can_read_all: false,
                chats: HashMap::new(),
                next_message_base: 100,
                blocked: HashSet::new(),
                next_update_id: 815_230_001,
                pending: Vec::new(),
                updates: HashMap::new(),
                allowed_updates: None,
                webhook: None,
                last_set_webhook: None,
                webhook_error: None,
                webhook_timeout: Duration::from_secs(30),
                delivering: HashSet::new(),
                deliveries: Vec::new(),
                poll_owner: None,
                poll_counter: 0,
                poll_ended: HashMap::new(),
                last_get_updates: None,
                files: HashMap::new(),
                next_file: 0,
                calls: Vec::new(),
                sent: Vec::new(),
                actions: Vec::new(),
                callback_queries: HashMap::new(),
                next_callback: 0,
                answers: Vec::new(),
                failures: Vec::new(),
                flood_until: HashMap::new(),
                commands: json!([]),
            }),
            updates: tokio::sync::Notify::new(),
            handle: runtime.handle().clone(),
        });
        runtime.spawn(api::serve(listener, shared.clone()));
        FakeTelegram {
            shared,
            addr,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT`: the channel's `TELEGRAM_API_BASE` (methods
    /// at `/bot{token}/…`, files at `/file/bot{token}/…`).
    pub fn api_base(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.lock()
    }

    // ---- the world ----

    /// Privacy mode (default on, as for a new bot): in groups the bot hears
    /// only commands, mentions and replies to it. Off, it hears everything.
    pub fn set_privacy_mode(&self, on: bool) {
        self.lock().bot_can_read_all = !on;
    }

    /// A supergroup the bot is a member of; its chat id.
    pub fn group(&self, title: &str) -> i64 {
        self.new_group(title, ChatKind::Supergroup, false)
    }

    /// A basic group (not a supergroup) the bot is a member of.
    pub fn basic_group(&self, title: &str) -> i64 {
        self.new_group(title, ChatKind::Group, false)
    }

    /// A supergroup with topics (a forum) the bot is a member of.
    pub fn forum(&self, title: &str) -> i64 {
        self.new_group(title, ChatKind::Supergroup, true)
    }

    fn new_group(&self, title: &str, kind: ChatKind, forum: bool) -> i64 {
        let mut s = self.lock();
        let n = s.chats.len() as i64 + 1;
        let id = match kind {
            ChatKind::Group => -4_000_000_000 - n,
            _ => -1_002_000_000_000 - n,
        };
        let mut chat = json!({"id": id, "title": title,
                              "type": if kind == ChatKind::Group { "group" } else { "supergroup" }});
        if forum {
            chat["is_forum"] = json!(true);
        }
        let base = s.next_message_base;
        s.next_message_base += 1000;
        s.chats.insert(
            id,
            Chat {
                json: chat,
                kind,
                forum,
                next_message_id: base,
                messages: BTreeMap::new(),
                topics: HashMap::new(),
            },
        );
        id
    }

    /// A topic `creator` opens in forum `chat`: its thread id (the id of
    /// its first message, a `forum_topic_created` service message).
    pub fn topic(&self, chat: i64, name: &str, creator: &Person) -> i64 {
        let mut s = self.lock();
        let c = s.chats.get_mut(&chat).expect("a forum made by forum()");
        assert!(c.forum, "topics are for forums");
        let id = c.next_message_id;
        c.next_message_id += 1;
        let msg = json!({"message_id": id, "message_thread_id": id, "from": creator.user(),
                         "chat": c.json, "date": unix_now(), "is_topic_message": true,
                         "forum_topic_created": {"name": name, "icon_color": 7_322_096}});
        c.messages.insert(id, msg);
        c.topics.insert(id, name.to_string());
        id
    }

    /// `person` blocks the bot: sends to them are refused with 403.
    pub fn block_bot(&self, person: &Person) {
        let update = {
            let mut s = self.lock();
            s.blocked.insert(person.id);
            let chat = person.private_chat();
            json!({"my_chat_member": {"chat": chat, "from": person.user(), "date": unix_now(),
                   "old_chat_member": {"user": bot_user(), "status": "member"},
                   "new_chat_member": {"user": bot_user(), "status": "kicked", "until_date": 0}}})
        };
        self.queue("my_chat_member", person.id, update);
    }

    pub fn unblock_bot(&self, person: &Person) {
        self.lock().blocked.remove(&person.id);
    }

    // ---- people write ----

    /// `person` writes `text` to the bot in their private chat.
    pub fn user_says(&self, person: &Person, text: &str) -> Inbound {
        self.says(person).text(text).send()
    }

    /// `person` writes `text` in group `chat`.
    pub fn user_says_in(&self, person: &Person, chat: i64, text: &str) -> Inbound {
        self.says(person).chat(chat).text(text).send()
    }

    /// A message to build: `tg.says(&ANN).chat(g).topic(t).text("…").send()`.
    pub fn says<'a>(&'a self, person: &Person) -> Say<'a> {
        Say {
            tg: self,
            person: *person,
            chat: None,
            topic: None,
            reply_to: None,
            text: None,
            media: None,
        }
    }

    /// `person` edits their message `message_id` in `chat` to `text`.
    pub fn user_edits(&self, person: &Person, chat: i64, message_id: i64, text: &str) -> Inbound {
        let message = {
            let mut s = self.lock();
            let c = s.chats.get_mut(&chat).expect("a known chat");
            let m = c
                .messages
                .get_mut(&message_id)
                .expect("a message of the chat");
            assert_eq!(m["from"]["id"], person.id, "people edit their own messages");
            m["text"] = json!(text);
            m["edit_date"] = json!(unix_now());
            let entities = html::detect(text);
            if let Some(o) = m.as_object_mut() {
                o.remove("entities");
                if !entities.is_empty() {
                    o.insert("entities".into(), entities_json(&entities));
                }
            }
            m.clone()
        };
        let update_id = self.queue_message("edited_message", chat, &message);
        Inbound {
            chat_id: chat,
            message_id,
            update_id,
            message,
        }
    }

    /// `person` presses the inline button with `callback_data` on the
    /// bot's message `message_id` in `chat`: the update's id and the
    /// query's id. Panics if the message has no such button.
    pub fn press_button(
        &self,
        person: &Person,
        chat: i64,
        message_id: i64,
        callback_data: &str,
    ) -> (Option<i64>, String) {
        let (query, id) = {
            let mut s = self.lock();
            let message = s
                .chats
                .get(&chat)
                .and_then(|c| c.messages.get(&message_id))
                .cloned()
                .expect("a message of the chat");
            assert_eq!(
                message["from"]["id"], BOT_ID,
                "buttons are on the bot's messages"
            );
            let has_button = message["reply_markup"]["inline_keyboard"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|row| row.as_array().cloned().unwrap_or_default())
                .any(|b| b["callback_data"] == callback_data);
            assert!(
                has_button,
                "no button with callback_data {callback_data:?}: {message}"
            );
            s.next_callback += 1;
            let id = (1_234_567_890_123_000_000u64 + s.next_callback).to_string();
            s.callback_queries
                .insert(id.clone(), CallbackQuery { answered: false });
            let query = json!({"id": id, "from": person.user(), "message": message,
                               "chat_instance": format!("-73123992845310{:05}", chat.unsigned_abs() % 100_000),
                               "data": callback_data});
            (query, id)
        };
        let update_id = self.queue("callback_query", chat, query);
        (update_id, id)
    }

    /// Makes an update and queues it for the bot (if its type is allowed).
    fn queue(&self, kind: &str, queue: i64, object: Value) -> Option<i64> {
        let update_id = {
            let mut s = self.lock();
            let allowed = match &s.allowed_updates {
                Some(list) if !list.is_empty() => list.iter().any(|k| k == kind),
                _ => !matches!(
                    kind,
                    "chat_member" | "message_reaction" | "message_reaction_count"
                ),
            };
            if !allowed {
                return None;
            }
            let id = s.next_update_id;
            s.next_update_id += 1;
            let body = match object.get(kind) {
                Some(_) => {
                    let mut b = object;
                    b["update_id"] = json!(id);
                    b
                }
                None => json!({"update_id": id, kind: object}),
            };
            s.updates.insert(id, body.clone());
            s.pending.push(Pending {
                update_id: id,
                queue,
                body,
            });
            id
        };
        self.shared.updates.notify_waiters();
        delivery::kick(&self.shared);
        Some(update_id)
    }

    fn queue_message(&self, kind: &str, chat: i64, message: &Value) -> Option<i64> {
        if !self.bot_hears(message) {
            return None;
        }
        self.queue(kind, chat, message.clone())
    }

    /// Privacy mode: in groups, commands, mentions and replies to the bot.
    fn bot_hears(&self, m: &Value) -> bool {
        if m["chat"]["type"] == "private" || self.lock().bot_can_read_all {
            return true;
        }
        let text = m["text"]
            .as_str()
            .or(m["caption"].as_str())
            .unwrap_or_default();
        let entities = m["entities"]
            .as_array()
            .or(m["caption_entities"].as_array())
            .cloned()
            .unwrap_or_default();
        let units: Vec<u16> = text.encode_utf16().collect();
        let said = |e: &Value| {
            let (o, l) = (
                e["offset"].as_u64().unwrap_or(0) as usize,
                e["length"].as_u64().unwrap_or(0) as usize,
            );
            String::from_utf16_lossy(&units[o.min(units.len())..(o + l).min(units.len())])
                .to_lowercase()
        };
        let me = format!("@{}", BOT_USERNAME.to_lowercase());
        let mentioned = entities.iter().any(|e| {
            (e["type"] == "mention" && said(e) == me)
                || (e["type"] == "bot_command" && said(e).ends_with(&me))
        });
        // A command for another bot (`/status@other_bot`) is not this one's.
        let for_another_bot = entities
            .iter()
            .find(|e| e["type"] == "bot_command" && e["offset"] == 0)
            .is_some_and(|e| said(e).contains('@') && !said(e).ends_with(&me));
        // A topic's first message is not a reply the bot is part of.
        let reply = &m["reply_to_message"];
        let reply_to_bot =
            reply["from"]["id"] == BOT_ID && reply.get("forum_topic_created").is_none();
        (text.starts_with('/') && !for_another_bot) || mentioned || reply_to_bot
    }

    pub(crate) fn hold_file(
        &self,
        folder: &str,
        ext: &str,
        bytes: Vec<u8>,
        mime: Option<&str>,
        name: Option<&str>,
    ) -> StoredFile {
        hold_file(&mut self.lock(), folder, ext, bytes, mime, name)
    }

    // ---- scripted failures ----

    /// The next `n` calls of `method` (any case) are refused with 429 and
    /// `retry_after` seconds; a call before that time has passed is refused
    /// again with the seconds left, as Telegram's flood control does.
    pub fn fail_next(&self, method: &str, n: u32, retry_after: u64) {
        self.lock().failures.push(Failure {
            method: method.to_lowercase(),
            left: n,
            status: 429,
            description: format!("Too Many Requests: retry after {retry_after}"),
            retry_after: Some(retry_after),
        });
    }

    /// The next `n` calls of `method` are refused with `status` and
    /// `description` (e.g. `502`, `Bad Gateway`).
    pub fn fail_next_with(&self, method: &str, n: u32, status: u16, description: &str) {
        self.lock().failures.push(Failure {
            method: method.to_lowercase(),
            left: n,
            status,
            description: description.to_string(),
            retry_after: None,
        });
    }

    /// How long Telegram waits for the webhook's answer before it counts
    /// the delivery failed and sends the update again (default 30 s).
    pub fn set_webhook_timeout(&self, within: Duration) {
        self.lock().webhook_timeout = within;
    }

    // ---- the webhook, from the test's side ----

    /// POSTs update `update_id` to the webhook again, with the secret
    /// Telegram sends (as when Telegram got no answer in time); the
    /// webhook's answer.
    pub fn redeliver(&self, update_id: i64) -> u16 {
        let (body, hook) = {
            let s = self.lock();
            let body = s.updates.get(&update_id).cloned().expect("a known update");
            (body, s.webhook.clone().expect("a webhook set"))
        };
        self.post_now(
            DeliveryKind::Redelivery,
            Some(update_id),
            body,
            hook.secret_token,
        )
    }

    /// POSTs `update` to the webhook with `secret` (wrong, or `None` for
    /// no header), as someone who is not Telegram; the webhook's answer.
    pub fn post_forged(&self, update: &Value, secret: Option<&str>) -> u16 {
        self.post_now(
            DeliveryKind::Forged,
            update["update_id"].as_i64(),
            update.clone(),
            secret.map(str::to_string),
        )
    }

    /// An update as Telegram would make one for `person` writing `text`
    /// privately (not queued: for [`Self::post_forged`]).
    pub fn forged_update(&self, person: &Person, text: &str) -> Value {
        let s = self.lock();
        let id = s.next_update_id + 500_000;
        json!({"update_id": id, "message": {"message_id": 9_999_001, "from": person.user(),
               "chat": person.private_chat(), "date": unix_now(), "text": text}})
    }

    fn post_now(
        &self,
        kind: DeliveryKind,
        update_id: Option<i64>,
        body: Value,
        secret: Option<String>,
    ) -> u16 {
        let (url, timeout) = {
            let s = self.lock();
            (
                s.webhook.as_ref().expect("a webhook set").url.clone(),
                s.webhook_timeout,
            )
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let shared = self.shared.clone();
        self.shared.handle.spawn(async move {
            let (status, _) =
                delivery::post(&url, secret.as_deref(), &body.to_string(), timeout).await;
            shared.lock().deliveries.push(Delivery {
                kind,
                update_id,
                body,
                secret,
                status,
                at: Instant::now(),
            });
            let _ = tx.send(status);
        });
        rx.recv().unwrap_or(0)
    }

    // ---- what happened ----

    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The calls of `method` (any case), in order.
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        self.lock()
            .calls
            .iter()
            .filter(|c| c.method.eq_ignore_ascii_case(method))
            .cloned()
            .collect()
    }

    /// Messages the bot sent that Telegram took, in order.
    pub fn sent(&self) -> Vec<SentMessage> {
        self.lock().sent.clone()
    }

    /// Those sent to `chat`.
    pub fn sent_to(&self, chat: i64) -> Vec<SentMessage> {
        self.lock()
            .sent
            .iter()
            .filter(|m| m.chat_id == chat)
            .cloned()
            .collect()
    }

    pub fn chat_actions(&self) -> Vec<ChatAction> {
        self.lock().actions.clone()
    }

    pub fn callback_answers(&self) -> Vec<CallbackAnswer> {
        self.lock().answers.clone()
    }

    pub fn webhook(&self) -> Option<Webhook> {
        self.lock().webhook.clone()
    }

    /// `allowed_updates` as the bot last set them (`None`: the default).
    pub fn allowed_updates(&self) -> Option<Vec<String>> {
        self.lock().allowed_updates.clone()
    }

    pub fn deliveries(&self) -> Vec<Delivery> {
        self.lock().deliveries.clone()
    }

    /// Updates not yet taken by the bot (delivered with a 2xx, or
    /// confirmed by a `getUpdates` offset).
    pub fn pending_updates(&self) -> Vec<i64> {
        self.lock().pending.iter().map(|p| p.update_id).collect()
    }

    pub fn file(&self, file_id: &str) -> Option<StoredFile> {
        self.lock().files.get(file_id).cloned()
    }

    /// A message of a chat (people's or the bot's) as Telegram holds it.
    pub fn message(&self, chat: i64, message_id: i64) -> Option<Value> {
        self.lock()
            .chats
            .get(&chat)
            .and_then(|c| c.messages.get(&message_id))
            .cloned()
    }

    /// The bot's commands as `setMyCommands` left them.
    pub fn commands(&self) -> Value {
        self.lock().commands.clone()
    }

    /// Polls `check` every 50 ms until it gives a value or `within` passes.
    pub fn wait_for<T>(
        &self,
        within: Duration,
        mut check: impl FnMut(&Self) -> Option<T>,
    ) -> Option<T> {
        poll::try_until_blocking(within, ms(50), || check(self).ok_or(())).ok()
    }

    /// Waits until `n` messages were sent; panics with the call log if not.
    pub fn wait_sent(&self, within: Duration, n: usize) -> Vec<SentMessage> {
        self.wait_for(within, |t| {
            let sent = t.sent();
            (sent.len() >= n).then_some(sent)
        })
        .unwrap_or_else(|| {
            panic!(
                "{n} messages sent within {within:?}; sent {:#?}\ncalls {:#?}",
                self.sent(),
                self.calls()
            )
        })
    }

    /// Waits until the webhook answered update `update_id` with a 2xx.
    pub fn wait_delivered(&self, within: Duration, update_id: i64) -> Delivery {
        self.wait_for(within, |t| {
            t.deliveries().into_iter().find(|d| {
                d.kind == DeliveryKind::Update
                    && d.update_id == Some(update_id)
                    && (200..300).contains(&d.status)
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "update {update_id} delivered within {within:?}: {:#?}",
                self.deliveries()
            )
        })
    }
}

/// What a person's message holds besides text.
#[derive(Debug, Clone)]
enum Media {
    Photo(Vec<u8>),
    Document {
        bytes: Vec<u8>,
        name: String,
        mime: String,
    },
    Voice {
        bytes: Vec<u8>,
        duration: u32,
    },
    Audio {
        bytes: Vec<u8>,
        name: String,
        mime: String,
        duration: u32,
    },
    Video {
        bytes: Vec<u8>,
        mime: String,
        duration: u32,
    },
}

/// A person's message being written (see [`FakeTelegram::says`]).
pub struct Say<'a> {
    tg: &'a FakeTelegram,
    person: Person,
    chat: Option<i64>,
    topic: Option<i64>,
    reply_to: Option<i64>,
    text: Option<String>,
    media: Option<Media>,
}

impl Say<'_> {
    /// In group `chat` (default: their private chat with the bot).
    pub fn chat(mut self, chat: i64) -> Self {
        self.chat = Some(chat);
        self
    }

    /// In forum topic `thread` of the chat.
    pub fn topic(mut self, thread: i64) -> Self {
        self.topic = Some(thread);
        self
    }

    /// As a reply to message `message_id` of the chat.
    pub fn reply_to(mut self, message_id: i64) -> Self {
        self.reply_to = Some(message_id);
        self
    }

    /// The text (with media: the caption).
    pub fn text(mut self, text: &str) -> Self {
        self.text = Some(text.to_string());
        self
    }

    /// A photo Telegram holds as `bytes` (its largest size; smaller
    /// thumbnails of other bytes come before it, as Telegram lists them).
    pub fn photo(mut self, bytes: Vec<u8>) -> Self {
        self.media = Some(Media::Photo(bytes));
        self
    }

    pub fn document(mut self, bytes: Vec<u8>, name: &str, mime: &str) -> Self {
        self.media = Some(Media::Document {
            bytes,
            name: name.into(),
            mime: mime.into(),
        });
        self
    }

    /// A voice note (OGG/Opus, as Telegram records them).
    pub fn voice(mut self, bytes: Vec<u8>, duration: u32) -> Self {
        self.media = Some(Media::Voice { bytes, duration });
        self
    }

    pub fn audio(mut self, bytes: Vec<u8>, name: &str, mime: &str, duration: u32) -> Self {
        self.media = Some(Media::Audio {
            bytes,
            name: name.into(),
            mime: mime.into(),
            duration,
        });
        self
    }

    pub fn video(mut self, bytes: Vec<u8>, mime: &str, duration: u32) -> Self {
        self.media = Some(Media::Video {
            bytes,
            mime: mime.into(),
            duration,
        });
        self
    }

    /// Telegram takes the message: the bot gets it as an update (unless
    /// privacy mode or `allowed_updates` keep it away).
    pub fn send(self) -> Inbound {
        let tg = self.tg;
        let media = self.media.map(|m| media_json(tg, m));
        let message = {
            let mut s = tg.lock();
            let chat_id = self.chat.unwrap_or(self.person.id);
            if !s.chats.contains_key(&chat_id) {
                assert_eq!(
                    chat_id, self.person.id,
                    "a group made by group() or forum()"
                );
                let base = s.next_message_base;
                s.next_message_base += 1000;
                s.chats.insert(
                    chat_id,
                    Chat {
                        json: self.person.private_chat(),
                        kind: ChatKind::Private,
                        forum: false,
                        next_message_id: base,
                        messages: BTreeMap::new(),
                        topics: HashMap::new(),
                    },
                );
            }
            let c = s.chats.get_mut(&chat_id).unwrap_or_else(|| unreachable!());
            let id = c.next_message_id;
            c.next_message_id += 1;
            let mut m = json!({"message_id": id, "from": self.person.user(), "chat": c.json,
                               "date": unix_now()});
            if let Some(t) = self.topic {
                assert!(c.topics.contains_key(&t), "a topic made by topic()");
                m["message_thread_id"] = json!(t);
                m["is_topic_message"] = json!(true);
            }
            let reply = self.reply_to.or(self.topic);
            if let Some(r) = reply {
                let mut replied = c
                    .messages
                    .get(&r)
                    .cloned()
                    .expect("a message of the chat to reply to");
                if let Some(o) = replied.as_object_mut() {
                    o.remove("reply_to_message");
                }
                if self.topic.is_none() {
                    if let Some(t) = replied.get("message_thread_id").cloned() {
                        m["message_thread_id"] = t;
                        m["is_topic_message"] = json!(true);
                    }
                }
                m["reply_to_message"] = replied;
            }
            let (text_key, entities_key) = match media {
                Some(_) => ("caption", "caption_entities"),
                None => ("text", "entities"),
            };
            if let Some(t) = &self.text {
                m[text_key] = json!(t);
                let entities = html::detect(t);
                if !entities.is_empty() {
                    m[entities_key] = entities_json(&entities);
                }
            }
            if let Some((key, value)) = &media {
                m[*key] = value.clone();
            }
            assert!(
                m.get("text").is_some() || media.is_some(),
                "a message has text or media"
            );
            c.messages.insert(id, m.clone());
            m
        };
        let chat_id = message["chat"]["id"].as_i64().unwrap_or_default();
        let update_id = tg.queue_message("message", chat_id, &message);
        Inbound {
            chat_id,
            message_id: message["message_id"].as_i64().unwrap_or_default(),
            update_id,
            message,
        }
    }
}

pub(crate) fn entities_json(entities: &[html::Entity]) -> Value {
    Value::Array(entities.iter().map(html::Entity::json).collect())
}

/// Bytes that are not the photo but stand for a smaller size of it.
fn thumbnail(len: usize, seed: u8) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0];
    b.extend((0..len.saturating_sub(6)).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)));
    b.extend_from_slice(&[0xFF, 0xD9]);
    b
}

/// The message field a person's file makes, the file held by the fake.
fn media_json(tg: &FakeTelegram, media: Media) -> (&'static str, Value) {
    let file = |f: &StoredFile| json!({"file_id": f.file_id, "file_unique_id": f.file_unique_id, "file_size": f.bytes.len()});
    match media {
        Media::Photo(bytes) => {
            let small = tg.hold_file("photos", "jpg", thumbnail(1_100, 7), None, None);
            let medium = tg.hold_file("photos", "jpg", thumbnail(9_000, 11), None, None);
            let large = tg.hold_file("photos", "jpg", bytes, None, None);
            let size = |f: &StoredFile, w: u32, h: u32| {
                let mut v = file(f);
                v["width"] = json!(w);
                v["height"] = json!(h);
                v
            };
            (
                "photo",
                json!([
                    size(&small, 90, 67),
                    size(&medium, 320, 240),
                    size(&large, 1280, 960)
                ]),
            )
        }
        Media::Document { bytes, name, mime } => {
            let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("bin");
            let f = tg.hold_file("documents", ext, bytes, Some(&mime), Some(&name));
            let mut v = file(&f);
            v["file_name"] = json!(name);
            v["mime_type"] = json!(mime);
            ("document", v)
        }
        Media::Voice { bytes, duration } => {
            let f = tg.hold_file("voice", "oga", bytes, Some("audio/ogg"), None);
            let mut v = file(&f);
            v["duration"] = json!(duration);
            v["mime_type"] = json!("audio/ogg");
            ("voice", v)
        }
        Media::Audio {
            bytes,
            name,
            mime,
            duration,
        } => {
            let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("mp3");
            let f = tg.hold_file("music", ext, bytes, Some(&mime), Some(&name));
            let mut v = file(&f);
            v["duration"] = json!(duration);
            v["file_name"] = json!(name);
            v["mime_type"] = json!(mime);
            ("audio", v)
        }
        Media::Video {
            bytes,
            mime,
            duration,
        } => {
            let f = tg.hold_file("videos", "mp4", bytes, Some(&mime), None);
            let mut v = file(&f);
            v["width"] = json!(640);
            v["height"] = json!(360);
            v["duration"] = json!(duration);
            v["mime_type"] = json!(mime);
            ("video", v)
        }
    }
}

/// Holds a file as Telegram would: a fresh `file_id`, and a path under
/// `folder` that `/file/bot{token}/…` serves.
pub(crate) fn hold_file(
    s: &mut State,
    folder: &str,
    ext: &str,
    bytes: Vec<u8>,
    mime: Option<&str>,
    name: Option<&str>,
) -> StoredFile {
    s.next_file += 1;
    let n = s.next_file;
    let prefix = match folder {
        "photos" => "AgACAgIAAxkBAAI",
        "voice" => "AwACAgIAAxkBAAI",
        "music" => "CQACAgIAAxkBAAI",
        "videos" => "BAACAgIAAxkBAAI",
        _ => "BQACAgIAAxkBAAI",
    };
    let f = StoredFile {
        file_id: format!("{prefix}{n:05}Zk9mYWtlLXRlbGVncmFt_{n}"),
        file_unique_id: format!("AQAD{n:06}fk"),
        file_path: format!("{folder}/file_{n}.{ext}"),
        bytes: Arc::new(bytes),
        mime_type: mime.map(str::to_string),
        file_name: name.map(str::to_string),
    };
    s.files.insert(f.file_id.clone(), f.clone());
    f
}

#[cfg(test)]
mod tests;
