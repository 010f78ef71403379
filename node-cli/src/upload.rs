//! `gsv chat --attach FILE`: a file sent to the gateway's `/media/upload`
//! (HTTP/1.1 POST with the auth token, over TLS for `wss://` gateways),
//! answered with the `ChannelMedia` that `chat.send` then names. The
//! request is small enough to write by hand: one POST with a known
//! length, `Connection: close`, and an answer read to its end.

use gsv_protocol::channels::ChannelMedia;
use gsv_protocol::MEDIA_UPLOAD_PATH;
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest file the gateway keeps (it refuses larger ones too; this
/// saves sending them).
pub const MAX_UPLOAD_BYTES: u64 = 25 * 1024 * 1024;

/// Where an upload goes, from the gateway's WebSocket URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadTarget {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// Path and query.
    pub path: String,
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `ws://host:port/ws` → `http://host:port/media/upload?sessionKey=…&filename=…`
/// (`wss` → `https`; a path prefix before `/ws` is kept).
pub fn upload_target(
    ws_url: &str,
    session_key: &str,
    filename: &str,
) -> Result<UploadTarget, String> {
    let (tls, rest) = if let Some(r) = ws_url.strip_prefix("wss://") {
        (true, r)
    } else if let Some(r) = ws_url.strip_prefix("ws://") {
        (false, r)
    } else {
        return Err(format!("{ws_url} is not a ws:// or wss:// URL"));
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h.to_string(),
            p.parse::<u16>()
                .map_err(|_| format!("bad port in {ws_url}"))?,
        ),
        _ => (authority.to_string(), if tls { 443 } else { 80 }),
    };
    if host.is_empty() {
        return Err(format!("{ws_url} has no host"));
    }
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let prefix = path
        .strip_suffix("ws")
        .unwrap_or(path)
        .trim_end_matches('/');
    let prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("/{prefix}")
    };
    Ok(UploadTarget {
        tls,
        host,
        port,
        path: format!(
            "{prefix}{MEDIA_UPLOAD_PATH}?sessionKey={}&filename={}",
            encode(session_key),
            encode(filename)
        ),
    })
}

/// Splits an HTTP/1.1 answer into its status and body (a chunked body
/// decoded).
pub fn read_answer(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the gateway's answer has no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let status = head
        .lines()
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or("the gateway's answer has no status")?;
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = &raw[end + 4..];
    if !chunked {
        return Ok((status, body.to_vec()));
    }
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let line_end = body[at..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk of the answer is cut")?
            + at;
        let size = String::from_utf8_lossy(&body[at..line_end]);
        let size = usize::from_str_radix(size.split(';').next().unwrap_or_default().trim(), 16)
            .map_err(|_| "a chunk of the answer has no size")?;
        if size == 0 {
            return Ok((status, out));
        }
        let start = line_end + 2;
        let chunk = body
            .get(start..start + size)
            .ok_or("a chunk of the answer is cut")?;
        out.extend_from_slice(chunk);
        at = start + size + 2;
    }
}

/// Uploads `file` for `session_key`; the stored file, or why not.
pub async fn upload(
    ws_url: &str,
    token: Option<&str>,
    session_key: &str,
    file: &Path,
) -> Result<ChannelMedia, String> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{} is not a file", file.display()))?;
    let bytes = tokio::fs::read(file)
        .await
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if bytes.len() as u64 > MAX_UPLOAD_BYTES {
        return Err(format!(
            "{name} is {:.1} MB; the gateway takes files up to 25 MB",
            bytes.len() as f64 / (1024.0 * 1024.0)
        ));
    }
    let target = upload_target(ws_url, session_key, &name)?;
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\nUser-Agent: gsv\r\n",
        target.path,
        target.host,
        bytes.len()
    );
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    head.push_str("\r\n");
    let tcp = tokio::net::TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| format!("cannot reach {}:{}: {e}", target.host, target.port))?;
    let raw = if target.tls {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let server = rustls::pki_types::ServerName::try_from(target.host.clone())
            .map_err(|e| format!("bad host {}: {e}", target.host))?;
        let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(server, tcp)
            .await
            .map_err(|e| format!("TLS with {} failed: {e}", target.host))?;
        exchange(stream, head.as_bytes(), &bytes).await?
    } else {
        exchange(tcp, head.as_bytes(), &bytes).await?
    };
    let (status, body) = read_answer(&raw)?;
    if status != 200 {
        let why = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v["error"].as_str().map(str::to_string))
            .unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
        return Err(format!("the gateway refused {name} ({status}): {why}"));
    }
    serde_json::from_slice(&body).map_err(|e| format!("the gateway's answer for {name}: {e}"))
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    head: &[u8],
    body: &[u8],
) -> Result<Vec<u8>, String> {
    let failed = |e: std::io::Error| format!("the upload failed: {e}");
    stream.write_all(head).await.map_err(failed)?;
    stream.write_all(body).await.map_err(failed)?;
    stream.flush().await.map_err(failed)?;
    let mut raw = Vec::new();
    // TLS servers may close without close_notify: what was read counts.
    if let Err(e) = stream.read_to_end(&mut raw).await {
        if raw.is_empty() {
            return Err(failed(e));
        }
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_urls_follow_the_websocket_url() {
        assert_eq!(
            upload_target("ws://127.0.0.1:8787/ws", "agent:main:main", "my photo.jpg"),
            Ok(UploadTarget {
                tls: false,
                host: "127.0.0.1".into(),
                port: 8787,
                path: "/media/upload?sessionKey=agent%3Amain%3Amain&filename=my%20photo.jpg".into()
            })
        );
        let t = upload_target("wss://gsv.me.workers.dev/ws", "main", "a.png").unwrap();
        assert_eq!(
            (t.tls, t.host.as_str(), t.port),
            (true, "gsv.me.workers.dev", 443)
        );
        assert_eq!(
            upload_target("wss://example.com/gsv/ws", "main", "a")
                .unwrap()
                .path,
            "/gsv/media/upload?sessionKey=main&filename=a"
        );
        assert!(upload_target("http://x/ws", "main", "a").is_err());
    }

    #[test]
    fn answers_plain_and_chunked() {
        assert_eq!(
            read_answer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"),
            Ok((200, b"{}".to_vec()))
        );
        assert_eq!(
            read_answer(b"HTTP/1.1 413 Payload Too Large\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"),
            Ok((413, b"abcde".to_vec()))
        );
        assert!(read_answer(b"garbage").is_err());
    }
}
