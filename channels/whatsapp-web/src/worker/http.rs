//! The crate's HTTP client: `fetch` from the account's object (media
//! downloads from WhatsApp's CDN, uploads to its media hosts). Every
//! answer is handed back with its status, as the crate requires: a 401 or
//! 404 tells it to refresh its media connection.

use whatsapp_rust::wacore::net::{HttpClient, HttpRequest, HttpResponse};
use worker::{Fetch, Headers, Method, Request, RequestInit};

pub struct FetchClient;

#[async_trait::async_trait(?Send)]
impl HttpClient for FetchClient {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        let headers = Headers::new();
        for (name, value) in &request.headers {
            headers
                .set(name, value)
                .map_err(|e| anyhow::anyhow!("header {name}: {e}"))?;
        }
        let method = match request.method.as_str() {
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "HEAD" => Method::Head,
            _ => Method::Get,
        };
        let mut init = RequestInit::new();
        init.with_method(method).with_headers(headers);
        if let Some(body) = &request.body {
            let array = js_sys::Uint8Array::from(body.as_ref());
            init.with_body(Some(array.into()));
        }
        let req = Request::new_with_init(&to_fetch(&request.url), &init)
            .map_err(|e| anyhow::anyhow!("{} {}: {e}", request.method, request.url))?;
        let mut response = Fetch::Request(req)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("{} {}: {e}", request.method, request.url))?;
        let body = response
            .bytes()
            .await
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", request.url))?;
        Ok(HttpResponse {
            status_code: response.status_code(),
            body,
        })
    }
}

/// The URL to fetch. The crate makes every media URL `https://` (as
/// WhatsApp's CDN is); the test harness's build only sends those for a
/// loopback host over plain HTTP, where the local double serves them.
#[cfg(not(feature = "test-double-trust"))]
fn to_fetch(url: &str) -> String {
    url.to_string()
}

#[cfg(feature = "test-double-trust")]
fn to_fetch(url: &str) -> String {
    match url.strip_prefix("https://127.0.0.1:") {
        Some(rest) => format!("http://127.0.0.1:{rest}"),
        None => url.to_string(),
    }
}
