//! Photos, voice notes and files, end to end: the real gateway and the
//! real WhatsApp channel Worker in one workerd, the fake WhatsApp Cloud
//! API (which holds the files people send and takes the business's
//! uploads) and the fake LLM (which records what the model was given and
//! transcribes audio as OpenAI does). R2 is read from outside, as an
//! operator would (`wrangler r2 object get --local`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use gsv_e2e::channel_rig::{start_gateway_with_whatsapp, start_number};
use gsv_e2e::fake_llm::{FakeLlm, RecordedRequest, Step};
use gsv_e2e::fake_whatsapp::{FakeWhatsApp, SentMessage};
use gsv_e2e::harness::Workerd;
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const ANN: &str = "16505551234";
const ANN_E164: &str = "+16505551234";
const WAIT: Duration = Duration::from_secs(60);
/// Ann's DMs join the main session (`session.dmScope` main).
const MAIN: &str = "agent:main:main";

/// A JPEG of `len` bytes: its header (a 64×48 frame) then filler.
pub fn jpeg(len: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    b.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    b.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x30, 0x00, 0x40]);
    b.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    while b.len() < len - 2 {
        b.push((b.len() % 251) as u8);
    }
    b.extend_from_slice(&[0xFF, 0xD9]);
    b
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

struct Chat {
    wa: FakeWhatsApp,
    llm: FakeLlm,
    gw: Workerd,
    owner: Client,
}

async fn start() -> Chat {
    let wa = FakeWhatsApp::start();
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_whatsapp(&wa, TOKEN);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    // The fake LLM is the model and (OpenAI-compatible) the transcriber.
    owner.use_fake_openai(&llm).await;
    owner
        .config_set("channels.whatsapp.dmPolicy", json!("allowlist"))
        .await;
    owner
        .config_set("channels.whatsapp.allowFrom", json!([ANN_E164]))
        .await;
    // Ann is the owner, on her phone: her messages are the main session's.
    owner
        .config_set("owner.identities", json!([ANN_E164]))
        .await;
    start_number(&mut owner).await;
    Chat { wa, llm, gw, owner }
}

fn text(m: &SentMessage) -> &str {
    m.body["text"]["body"].as_str().unwrap_or_default()
}

/// The user messages of a model request (OpenAI's shape).
fn user_parts(r: &RecordedRequest) -> Vec<Value> {
    r.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .cloned()
        .collect()
}

impl Chat {
    fn wait_sent(&self, n: usize) -> Vec<SentMessage> {
        self.wa
            .wait_for(WAIT, |w| {
                let sent = w.sent();
                (sent.len() >= n).then_some(sent)
            })
            .unwrap_or_else(|| panic!("{n} messages sent: {:#?}", self.wa.graph_log()))
    }

    /// The stored messages of the main session, as `session.preview` shows them.
    async fn history(&mut self) -> Vec<Value> {
        let res = self
            .owner
            .request("session.preview", json!({"sessionKey": "main"}))
            .await;
        assert!(res.ok, "{res:?}");
        res.payload.unwrap()["messages"].as_array().unwrap().clone()
    }

    /// The R2 key of the one image the history holds.
    async fn image_key(&mut self) -> String {
        let history = self.history().await;
        let keys: Vec<String> = history
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|b| b["type"] == "image")
            .map(|b| b["r2Key"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(keys.len(), 1, "{history:#?}");
        keys[0].clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_reaches_the_model_as_an_image_and_stays_in_r2_until_the_reset() {
    let mut chat = start().await;
    let photo = jpeg(4000);
    chat.wa.user_sends_file(
        ANN,
        "Ann",
        "image",
        "image/jpeg",
        photo.clone(),
        Some("what is in this photo?"),
        None,
    );
    let sent = chat.wait_sent(1);
    assert!(text(&sent[0]).starts_with("echo: "), "{sent:#?}");

    // The model got the caption in its envelope and the photo as an
    // image part of the same message, in OpenAI's format.
    let asked = chat.llm.requests();
    let last = user_parts(asked.last().unwrap()).pop().unwrap();
    let parts = last["content"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{last:#}");
    assert!(parts[0]["text"]
        .as_str()
        .unwrap()
        .contains("<<<channel-message>>>\nwhat is in this photo?\n<<<end-channel-message>>>"));
    assert_eq!(
        parts[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/jpeg;base64,{}", b64(&photo))}})
    );

    // The history holds the key, never the bytes; R2 holds the bytes at
    // the seed layout's path.
    let key = chat.image_key().await;
    let name = key
        .strip_prefix(&format!("media/{MAIN}/"))
        .unwrap_or_else(|| panic!("{key}"));
    let (id, ext) = name.split_once('.').unwrap();
    assert_eq!((id.len(), ext), (36, "jpg"), "{key}");
    let history = chat.history().await;
    assert_eq!(
        history[0]["content"][1],
        json!({"type": "image", "mimeType": "image/jpeg", "r2Key": key, "size": 4000})
    );
    assert!(!history[0].to_string().contains(&b64(&photo)));
    assert_eq!(chat.gw.r2_get_outside(&key), Some(photo.clone()));

    // The next call sends the photo again (from the isolate's cache).
    chat.wa.user_says(ANN, "Ann", "and the colours?");
    chat.wait_sent(2);
    let again = chat.llm.requests();
    assert!(again
        .last()
        .unwrap()
        .body
        .to_string()
        .contains(&b64(&photo)));

    // A reset archives the conversation with the key and deletes the file.
    let reset = chat
        .owner
        .request("session.reset", json!({"sessionKey": "main"}))
        .await;
    assert!(reset.ok, "{reset:?}");
    let reset = reset.payload.unwrap();
    assert_eq!(reset["mediaDeleted"], json!(1), "{reset:#}");
    assert_eq!(chat.gw.r2_get_outside(&key), None);
    let archived = chat
        .owner
        .request(
            "session.transcript",
            json!({"sessionKey": "main", "sessionId": reset["oldSessionId"]}),
        )
        .await;
    assert!(archived.ok, "{archived:?}");
    let archived = archived.payload.unwrap().to_string();
    assert!(archived.contains(&key) && !archived.contains(&b64(&photo)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voice_note_reaches_the_model_as_its_transcript_made_once() {
    let chat = start().await;
    chat.llm.set_transcript("Please buy milk on the way home.");
    let voice = [b"OggS\x00\x02".as_slice(), &[7u8; 3000]].concat();
    chat.wa.user_sends_file(
        ANN,
        "Ann",
        "audio",
        "audio/ogg; codecs=opus",
        voice.clone(),
        None,
        None,
    );
    chat.wait_sent(1);
    let transcribed = chat.llm.transcriptions();
    assert_eq!(transcribed.len(), 1, "{transcribed:?}");
    let t = &transcribed[0];
    assert_eq!(
        (
            t.filename.as_deref(),
            t.model.as_deref(),
            t.content_type.as_deref(),
            &t.bytes,
            t.status
        ),
        (
            Some("voice.ogg"),
            Some("whisper-1"),
            Some("audio/ogg"),
            &voice,
            200
        )
    );
    let note = "[Voice message transcription: Please buy milk on the way home.]";
    let asked = chat.llm.requests();
    assert!(asked.last().unwrap().body.to_string().contains(note));

    // Later calls read the stored transcript: no second transcription.
    chat.wa.user_says(ANN, "Ann", "did you get it?");
    chat.wait_sent(2);
    assert_eq!(chat.llm.transcriptions().len(), 1);
    let asked = chat.llm.requests();
    assert!(asked.last().unwrap().body.to_string().contains(note));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_over_25_mb_is_refused_with_a_message_and_a_note_to_the_model() {
    let chat = start().await;
    let (_, media_id) = chat.wa.user_sends_file(
        ANN,
        "Ann",
        "video",
        "video/mp4",
        vec![0u8; 30 * 1024 * 1024],
        Some("our trip"),
        None,
    );
    let sent = chat.wait_sent(2);
    let texts: Vec<&str> = sent.iter().map(text).collect();
    assert!(
        texts.contains(
            &"Sorry, I couldn't take your file: it is 30.0 MB and I can take files up to 25.0 MB."
        ),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.starts_with("echo: ")), "{texts:?}");
    // The model knows what came and why it cannot see it.
    let asked = chat.llm.requests();
    assert!(asked.last().unwrap().body.to_string().contains(
        "[Video attached but not kept: (video/mp4, 30.0 MB): 30.0 MB is larger than the 25.0 MB limit]"
    ));
    // Refused by its size as Meta gave it: never downloaded.
    let log = chat.wa.graph_log();
    assert!(log
        .iter()
        .any(|r| r.method == "GET" && r.path == format!("/{media_id}")));
    assert!(!log
        .iter()
        .any(|r| r.path.starts_with("/whatsapp_business/attachments/")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_sends_a_photo_and_a_workspace_file_back_by_upload() {
    let mut chat = start().await;
    let photo = jpeg(3000);
    chat.wa
        .user_sends_file(ANN, "Ann", "image", "image/jpeg", photo.clone(), None, None);
    chat.wait_sent(1);
    let key = chat.image_key().await;
    let written = chat
        .owner
        .request(
            "workspace.write",
            json!({"path": "reports/notes.md", "content": "# Notes\nmilk, bread\n"}),
        )
        .await;
    assert!(written.ok, "{written:?}");
    chat.llm.script(
        "send them back",
        vec![
            Step::tool_call(
                "call_files",
                "gsv__Message",
                json!({"text": "Here you go", "attachments": [key, "reports/notes.md"]}),
            ),
            Step::text("Sent."),
        ],
    );
    chat.wa.user_says(ANN, "Ann", "send them back please");
    let sent = chat.wait_sent(5);
    // The text, then each file as its own message naming its upload.
    assert_eq!(text(&sent[1]), "Here you go");
    let image = &sent[2].body;
    assert_eq!(image["type"], "image", "{image:#}");
    let uploaded = chat
        .wa
        .media(image["image"]["id"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        (
            uploaded.mime_type.as_str(),
            uploaded.uploaded,
            uploaded.bytes.as_ref()
        ),
        ("image/jpeg", true, &photo)
    );
    let doc = &sent[3].body;
    assert_eq!(doc["type"], "document", "{doc:#}");
    assert_eq!(doc["document"]["filename"], "notes.md");
    let uploaded = chat
        .wa
        .media(doc["document"]["id"].as_str().unwrap())
        .unwrap();
    assert_eq!(
        (uploaded.mime_type.as_str(), uploaded.bytes.as_ref()),
        ("text/plain", &b"# Notes\nmilk, bread\n".to_vec())
    );
    assert_eq!(text(&sent[4]), "Sent.");
    // The model was told what went.
    let result = chat
        .llm
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_files")
        .unwrap();
    assert_eq!(
        result["content"],
        json!(format!(
            "Sent to whatsapp:{ANN_E164} with 2 files as 3 messages."
        ))
    );
}
