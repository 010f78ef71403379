//! Webhook delivery as Telegram does it: each update is POSTed as JSON to
//! the webhook with `X-Telegram-Bot-Api-Secret-Token` (when one was set),
//! and sent again until the webhook answers 2xx: the first retry at once
//! (or after the `Retry-After` the webhook asked for), then with a delay
//! that doubles (here from ¼ s to 4 s, Telegram's from 1 s to a minute).
//! The updates of one chat go out one at a time, in order; chats do not
//! wait for each other. An update not answered within the webhook timeout
//! counts as failed and goes again, as it does with Telegram.

use super::{unix_now, Delivery, DeliveryKind, Shared};
use bytes::Bytes;
use http_body_util::Full;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Starts a delivery task for every chat queue with updates waiting and
/// none running (when a webhook is set).
pub(crate) fn kick(shared: &Arc<Shared>) {
    let queues: Vec<i64> = {
        let mut s = shared.lock();
        if s.webhook.is_none() {
            return;
        }
        let mut fresh = Vec::new();
        for p in &s.pending {
            if !s.delivering.contains(&p.queue) && !fresh.contains(&p.queue) {
                fresh.push(p.queue);
            }
        }
        for q in &fresh {
            s.delivering.insert(*q);
        }
        fresh
    };
    for queue in queues {
        shared.handle.spawn(run_queue(shared.clone(), queue));
    }
}

/// Delivers chat `queue`'s updates until none is left or the webhook goes.
async fn run_queue(shared: Arc<Shared>, queue: i64) {
    let mut fails: u32 = 0;
    loop {
        let next = {
            let mut s = shared.lock();
            let hook = s.webhook.clone();
            let update = s.pending.iter().find(|p| p.queue == queue).cloned();
            match (hook, update) {
                (Some(hook), Some(update)) => (hook, update, s.webhook_timeout),
                _ => {
                    s.delivering.remove(&queue);
                    return;
                }
            }
        };
        let (hook, update, timeout) = next;
        let (status, retry_after) = post(
            &hook.url,
            hook.secret_token.as_deref(),
            &update.body.to_string(),
            timeout,
        )
        .await;
        let ok = (200..300).contains(&status);
        {
            let mut s = shared.lock();
            s.deliveries.push(Delivery {
                kind: DeliveryKind::Update,
                update_id: Some(update.update_id),
                body: update.body.clone(),
                secret: hook.secret_token.clone(),
                status,
                at: Instant::now(),
            });
            if ok {
                s.pending.retain(|p| p.update_id != update.update_id);
            } else {
                let why = match status {
                    0 => "Connection refused or read timeout expired".to_string(),
                    s => format!("Wrong response from the webhook: {s} {}", reason(s)),
                };
                s.webhook_error = Some((unix_now(), why));
            }
        }
        if ok {
            fails = 0;
            continue;
        }
        fails += 1;
        let delay = match (retry_after, fails) {
            (Some(secs), _) => Duration::from_secs(secs.min(3600)),
            (None, 1) => Duration::ZERO,
            (None, n) => Duration::from_millis(250u64 << (n - 2).min(4)),
        };
        tokio::time::sleep(delay).await;
    }
}

fn reason(status: u16) -> &'static str {
    hyper::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("")
}

/// POSTs `body` to `url` as Telegram's webhook requests look; the status
/// (0: not reached, or no answer within `timeout`) and the `Retry-After`
/// the webhook asked for.
pub(crate) async fn post(
    url: &str,
    secret: Option<&str>,
    body: &str,
    timeout: Duration,
) -> (u16, Option<u64>) {
    let client: hyper_util::client::legacy::Client<_, Full<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let mut req = hyper::Request::builder()
        .method("POST")
        .uri(url)
        .header("content-type", "application/json")
        .header("accept-encoding", "gzip, deflate");
    if let Some(s) = secret {
        req = req.header("x-telegram-bot-api-secret-token", s);
    }
    let Ok(req) = req.body(Full::new(Bytes::from(body.to_string()))) else {
        return (0, None);
    };
    let answer = async {
        let resp = client.request(req).await.ok()?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        // The body is not read: the status is the answer, and a Worker's
        // connection may stay open while its `waitUntil` work goes on.
        drop(resp);
        Some((status, retry_after))
    };
    tokio::time::timeout(timeout, answer)
        .await
        .ok()
        .flatten()
        .unwrap_or((0, None))
}
