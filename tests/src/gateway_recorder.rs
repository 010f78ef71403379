//! Records what a channel Worker sends the gateway (through the
//! `tests/support/gateway-double` Worker, which forwards here) and answers
//! like the gateway: `/internal/channel/inbound` → `started`,
//! `/internal/channel/status` → `ok`.

use crate::poll::{self, ms};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq)]
pub struct GatewayCall {
    pub path: String,
    /// The `x-gsv-channel-key` header.
    pub key: Option<String>,
    pub body: Value,
    /// The HTTP status the recorder answered.
    pub answered: u16,
}

pub struct GatewayRecorder {
    calls: Arc<Mutex<Vec<GatewayCall>>>,
    /// While set, inbound calls get a 503 (the gateway is down).
    failing: Arc<AtomicBool>,
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for GatewayRecorder {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl GatewayRecorder {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("gateway-recorder")
            .enable_all()
            .build()
            .expect("recorder runtime");
        let calls = Arc::new(Mutex::new(Vec::new()));
        let failing = Arc::new(AtomicBool::new(false));
        let listener = {
            let _context = runtime.enter();
            crate::fake_discord::loopback_listener()
        };
        let addr = listener.local_addr().unwrap();
        let shared = calls.clone();
        let fail = failing.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let calls = shared.clone();
                let fail = fail.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        handle(calls.clone(), fail.load(Ordering::SeqCst), req)
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            calls,
            failing,
            addr,
            runtime: Some(runtime),
        }
    }

    /// The double's `RECORD_URL`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn calls(&self) -> Vec<GatewayCall> {
        self.calls.lock().unwrap().clone()
    }

    /// Inbound calls fail with 503 while `down`.
    pub fn set_down(&self, down: bool) {
        self.failing.store(down, Ordering::SeqCst);
    }

    /// The bodies posted to `path` and accepted (200), in order.
    pub fn bodies(&self, path: &str) -> Vec<Value> {
        self.calls()
            .into_iter()
            .filter(|c| c.path == path && c.answered == 200)
            .map(|c| c.body)
            .collect()
    }

    /// Waits until `check` holds for the bodies posted to `path`.
    pub fn wait_bodies(
        &self,
        path: &str,
        within: Duration,
        check: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        poll::try_until_blocking(within, ms(50), || {
            let bodies = self.bodies(path);
            if check(&bodies) {
                Ok(bodies)
            } else {
                Err(bodies)
            }
        })
        .unwrap_or_else(|last| last)
    }
}

async fn handle(
    calls: Arc<Mutex<Vec<GatewayCall>>>,
    down: bool,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let key = req
        .headers()
        .get("x-gsv-channel-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let (answered, reply) = match path.as_str() {
        "/internal/channel/inbound" if down => (503, json!({"error": "down"})),
        "/internal/channel/inbound" => (
            200,
            json!({"ok": true, "status": "started", "runId": "run-1"}),
        ),
        _ => (200, json!({"ok": true})),
    };
    calls.lock().unwrap().push(GatewayCall {
        path,
        key,
        body,
        answered,
    });
    Ok(Response::builder()
        .status(answered)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(reply.to_string())))
        .unwrap())
}
