use futures_util::StreamExt;
use worker::*;

/// A minimal streamed OpenAI chat completion, read whole.
async fn model_call(url: &str, text: &str) -> Result<String> {
    let body = serde_json::json!({
        "model": "floor",
        "stream": true,
        "messages": [{"role": "user", "content": text}],
    });
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(body.to_string().into()));
    let req = Request::new_with_init(url, &init)?;
    Fetch::Request(req).send().await?.text().await
}

/// "llm:URL rest" → (URL, rest).
fn target(text: &str) -> (&str, &str) {
    let body = text.split_once(':').map_or(text, |(_, body)| body);
    body.split_once(' ').unwrap_or((body, ""))
}

/// A POST of `text` to the object named "back".
async fn to_back(env: &Env, path: &str, text: String) -> Result<String> {
    let stub = env
        .durable_object("BACK")?
        .id_from_name("back")?
        .get_stub()?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_body(Some(text.into()));
    let req = Request::new_with_init(&format!("https://back{path}"), &init)?;
    stub.fetch_with_request(req).await?.text().await
}

#[durable_object]
pub struct Echo {
    state: State,
    env: Env,
}

impl DurableObject for Echo {
    fn new(state: State, env: Env) -> Self {
        Self { state, env }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let pair = WebSocketPair::new()?;
        // The second object's link (see `open_link`), or a client.
        let tag = if req.path() == "/link" { LINK } else { CLIENT };
        self.state.accept_websocket_with_tags(&pair.server, &[tag]);
        Response::from_websocket(pair.client)
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let text = match message {
            WebSocketIncomingMessage::String(text) => text,
            WebSocketIncomingMessage::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        };
        if text.starts_with("llm:") {
            let (url, rest) = target(&text);
            return ws.send_with_str(model_call(url, rest).await?.len().to_string());
        }
        if text.starts_with("turn:") {
            return ws.send_with_str(to_back(&self.env, "/turn", text).await?);
        }
        if text.starts_with("toolturn:") {
            return ws.send_with_str(to_back(&self.env, "/toolturn", text).await?);
        }
        if text.starts_with("hop:") {
            return ws.send_with_str(to_back(&self.env, "/echo", text).await?);
        }
        if text.starts_with("link:") {
            return self.over_link(text).await;
        }
        if let Some(answer) = text.strip_prefix(LINKED) {
            // The second object's answer on the link: to the clients.
            for client in self.state.get_websockets_with_tag(CLIENT) {
                let _ = client.send_with_str(answer);
            }
            return Ok(());
        }
        ws.send_with_str(text)
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        let code = if code == 1005 { 1000 } else { code as u16 };
        ws.close(Some(code), Some("closed"))
    }
}

impl Echo {
    /// Sends `text` to the second object over the WebSocket it keeps open to
    /// this one (asking it to open it first); the answer comes back on the
    /// link as a message of its own, and nothing waits for it here.
    async fn over_link(&self, text: String) -> Result<()> {
        let link = match self.state.get_websockets_with_tag(LINK).pop() {
            Some(link) => link,
            None => {
                to_back(&self.env, "/open", String::new()).await?;
                let link = self.state.get_websockets_with_tag(LINK).pop();
                link.ok_or_else(|| Error::RustError("the link did not open".into()))?
            }
        };
        link.send_with_str(text)
    }
}

/// The tags of the first object's sockets.
const CLIENT: &str = "client";
const LINK: &str = "link";
/// What the second object puts before its answers on the link.
const LINKED: &str = "linked:";

#[durable_object]
pub struct Back {
    state: State,
    env: Env,
}

impl DurableObject for Back {
    fn new(state: State, env: Env) -> Self {
        let created = state.storage().sql().exec(
            "CREATE TABLE IF NOT EXISTS messages (idx INTEGER PRIMARY KEY, data TEXT NOT NULL)",
            None,
        );
        if let Err(e) = created {
            console_error!("messages table: {e}");
        }
        Self { state, env }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let text = req.text().await?;
        if req.path() == "/open" {
            open_link(&self.env).await?;
            return Response::ok("");
        }
        let path = req.path();
        if path != "/turn" && path != "/toolturn" {
            return Response::ok(text);
        }
        let (url, rest) = target(&text);
        let sql = self.state.storage().sql();
        let store =
            |data: &str| sql.exec("INSERT INTO messages (data) VALUES (?)", vec![data.into()]);
        store(rest)?;
        let mut answer = model_call(url, rest).await?;
        store(&answer)?;
        if path == "/toolturn" {
            let file = read_file(&self.env).await?;
            store(&file)?;
            answer = model_call(url, &format!("{rest}\n{file}")).await?;
            store(&answer)?;
        }
        Response::ok(answer)
    }
}

/// About the size of the workspace's IDENTITY.md.
fn identity() -> String {
    let line = "- Name: the bench's agent, who reads this file in a tool turn.\n";
    format!("# IDENTITY.md\n\n{}", line.repeat(5))
}

/// The file a native ReadFile reads, from R2, written on first use.
async fn read_file(env: &Env) -> Result<String> {
    const KEY: &str = "agents/main/IDENTITY.md";
    let bucket = env.bucket("STORAGE")?;
    let object = match bucket.get(KEY).execute().await? {
        Some(object) => object,
        None => {
            bucket.put(KEY, identity()).execute().await?;
            let object = bucket.get(KEY).execute().await?;
            object.ok_or_else(|| Error::RustError("the file was not stored".into()))?
        }
    };
    let body = object
        .body()
        .ok_or_else(|| Error::RustError("the file has no body".into()))?;
    body.text().await
}

/// Opens a WebSocket from the second object to the first, and answers
/// each message on it, as a Session's event link would carry requests.
async fn open_link(env: &Env) -> Result<()> {
    let stub = env
        .durable_object("ECHO")?
        .id_from_name("echo")?
        .get_stub()?;
    let headers = Headers::new();
    headers.set("Upgrade", "websocket")?;
    let mut init = RequestInit::new();
    init.with_headers(headers);
    let req = Request::new_with_init("https://echo/link", &init)?;
    let res = stub.fetch_with_request(req).await?;
    let ws = res
        .websocket()
        .ok_or_else(|| Error::RustError("no link".into()))?;
    ws.accept()?;
    wasm_bindgen_futures::spawn_local(async move {
        let Ok(mut events) = ws.events() else {
            return;
        };
        while let Some(Ok(WebsocketEvent::Message(msg))) = events.next().await {
            if let Some(text) = msg.text() {
                let _ = ws.send_with_str(format!("{LINKED}{text}"));
            }
        }
    });
    Ok(())
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    if req.path() == "/health" {
        return Response::ok(r#"{"status":"healthy"}"#);
    }
    let stub = env
        .durable_object("ECHO")?
        .id_from_name("echo")?
        .get_stub()?;
    stub.fetch_with_request(req).await
}
