//! The node's side of `gsv__Transfer`: sending a workspace file as binary
//! frames, and receiving one into a temporary file next to its destination
//! that replaces the destination only when its size and SHA-256 match.
//! Paths obey the same workspace confinement as the tools.

use crate::connection::Connection;
use crate::tools::Workspace;
use gsv_protocol::method;
use gsv_protocol::transfer::*;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::AsyncReadExt;

struct Incoming {
    temp: tempfile::NamedTempFile,
    dest: PathBuf,
    size: u64,
    written: u64,
    hasher: Sha256,
    failed: Option<String>,
}

pub struct Transfers {
    workspace: Arc<Workspace>,
    incoming: HashMap<u32, Incoming>,
}

fn failed(transfer_id: u32, error: String) -> TransferStatusParams {
    TransferStatusParams {
        transfer_id,
        state: TransferState::Failed,
        size: None,
        sha256: None,
        error: Some(error),
    }
}

impl Transfers {
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self {
            workspace,
            incoming: HashMap::new(),
        }
    }

    /// `transfer.send`: streams the file in a task of its own.
    pub fn send(&self, conn: Arc<Connection>, evt: TransferSendEvent) {
        let workspace = self.workspace.clone();
        tokio::spawn(async move {
            let id = evt.transfer_id;
            if let Err(e) = send_file(&conn, &workspace, &evt).await {
                let _ = status(&conn, failed(id, e)).await;
            }
        });
    }

    /// `transfer.receive`: opens a temporary file beside the destination.
    pub fn receive(&mut self, evt: &TransferReceiveEvent) -> Result<(), TransferStatusParams> {
        let id = evt.transfer_id;
        let open = || -> Result<Incoming, String> {
            let dest = self.workspace.resolve("path", &evt.path)?;
            if dest.is_dir() {
                return Err(format!("{} is a directory", dest.display()));
            }
            let dir = dest
                .parent()
                .ok_or("the destination has no parent directory")?;
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let temp = tempfile::Builder::new()
                .prefix(".gsv-transfer-")
                .tempfile_in(dir)
                .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
            Ok(Incoming {
                temp,
                dest,
                size: evt.size,
                written: 0,
                hasher: Sha256::new(),
                failed: None,
            })
        };
        let incoming = open().map_err(|e| failed(id, e))?;
        self.incoming.insert(id, incoming);
        Ok(())
    }

    /// A binary frame: the next chunk of an incoming file.
    pub fn chunk(&mut self, frame: &[u8]) {
        let Some((id, chunk)) = split_frame(frame) else {
            return;
        };
        let Some(inc) = self.incoming.get_mut(&id) else {
            return;
        };
        if inc.failed.is_some() {
            return;
        }
        inc.written += chunk.len() as u64;
        if inc.written > inc.size {
            inc.failed = Some(format!(
                "received more than the announced {} bytes",
                inc.size
            ));
            return;
        }
        inc.hasher.update(chunk);
        if let Err(e) = inc.temp.write_all(chunk) {
            inc.failed = Some(format!("writing {} failed: {e}", inc.dest.display()));
        }
    }

    /// `transfer.end`: keeps the file if it is whole, else drops it.
    pub fn end(&mut self, evt: &TransferEndEvent) -> TransferStatusParams {
        let id = evt.transfer_id;
        let Some(inc) = self.incoming.remove(&id) else {
            return failed(id, format!("no transfer {id} is being received"));
        };
        if let Some(e) = inc.failed {
            return failed(id, e);
        }
        if inc.written != inc.size {
            return failed(
                id,
                format!("received {} of {} bytes", inc.written, inc.size),
            );
        }
        let sha = hex(&inc.hasher.finalize());
        if sha != evt.sha256 {
            return failed(
                id,
                format!("checksum mismatch: expected {}, got {sha}", evt.sha256),
            );
        }
        let keep = || -> std::io::Result<()> {
            inc.temp.as_file().sync_all()?;
            let mode = std::fs::metadata(&inc.dest)
                .map(|m| m.permissions())
                .unwrap_or_else(|_| std::os::unix::fs::PermissionsExt::from_mode(0o644));
            std::fs::set_permissions(inc.temp.path(), mode)?;
            inc.temp.persist(&inc.dest).map_err(|e| e.error)?;
            Ok(())
        };
        let dest = inc.dest.clone();
        match keep() {
            Ok(()) => TransferStatusParams {
                transfer_id: id,
                state: TransferState::Done,
                size: Some(inc.size),
                sha256: Some(sha),
                error: None,
            },
            Err(e) => failed(
                id,
                format!("cannot put the file at {}: {e}", dest.display()),
            ),
        }
    }

    /// `transfer.cancel` or a lost connection: the partial file is deleted
    /// (dropping the temporary file removes it).
    pub fn cancel(&mut self, id: u32) {
        self.incoming.remove(&id);
    }
}

pub async fn status(conn: &Connection, p: TransferStatusParams) -> Result<(), String> {
    conn.call::<method::TransferStatus>(&p)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

async fn send_file(
    conn: &Connection,
    workspace: &Workspace,
    evt: &TransferSendEvent,
) -> Result<(), String> {
    let id = evt.transfer_id;
    let path = workspace.resolve("path", &evt.path)?;
    let mut file = tokio::fs::File::open(&path)
        .await
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let meta = file.metadata().await.map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    let size = meta.len();
    if size > evt.max_bytes {
        return Err(format!(
            "{} has {size} bytes; the limit is {} (tools.maxTransferBytes)",
            path.display(),
            evt.max_bytes
        ));
    }
    let sending = TransferStatusParams {
        transfer_id: id,
        state: TransferState::Sending,
        size: Some(size),
        sha256: None,
        error: None,
    };
    status(conn, sending).await?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut sent = 0u64;
    while sent < size {
        let want = ((size - sent) as usize).min(CHUNK_BYTES);
        let n = file
            .read(&mut buf[..want])
            .await
            .map_err(|e| format!("reading {} failed: {e}", path.display()))?;
        if n == 0 {
            return Err(format!("{} shrank while it was sent", path.display()));
        }
        hasher.update(&buf[..n]);
        conn.send_binary(frame(id, &buf[..n]));
        sent += n as u64;
    }
    let sent_status = TransferStatusParams {
        transfer_id: id,
        state: TransferState::Sent,
        size: Some(size),
        sha256: Some(hex(&hasher.finalize())),
        error: None,
    };
    status(conn, sent_status).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Transfers) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path().to_path_buf(), true).unwrap();
        (dir, Transfers::new(Arc::new(ws)))
    }

    fn receive(t: &mut Transfers, id: u32, path: &str, size: u64) {
        let evt = TransferReceiveEvent {
            transfer_id: id,
            path: path.into(),
            size,
        };
        t.receive(&evt).unwrap();
    }

    /// Files in `dir`, temporary ones included.
    fn listing(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_whole_file_replaces_the_destination() {
        let (dir, mut t) = setup();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("out/a.bin"), b"old").unwrap();
        let data: Vec<u8> = (0..150_000u32).map(|i| (i % 251) as u8).collect();
        receive(&mut t, 7, "out/a.bin", data.len() as u64);
        for chunk in data.chunks(CHUNK_BYTES) {
            t.chunk(&frame(7, chunk));
        }
        let sha = hex(&Sha256::digest(&data));
        let st = t.end(&TransferEndEvent {
            transfer_id: 7,
            sha256: sha.clone(),
        });
        assert_eq!(
            st,
            TransferStatusParams {
                transfer_id: 7,
                state: TransferState::Done,
                size: Some(150_000),
                sha256: Some(sha),
                error: None
            }
        );
        assert_eq!(std::fs::read(dir.path().join("out/a.bin")).unwrap(), data);
        assert_eq!(listing(&dir.path().join("out")), ["a.bin"]);
    }

    #[test]
    fn a_broken_transfer_leaves_nothing_behind() {
        let (dir, mut t) = setup();
        // Wrong checksum: the old file stays, no temporary file is left.
        std::fs::write(dir.path().join("keep.txt"), b"old").unwrap();
        receive(&mut t, 1, "keep.txt", 3);
        t.chunk(&frame(1, b"new"));
        let st = t.end(&TransferEndEvent {
            transfer_id: 1,
            sha256: "00".into(),
        });
        assert_eq!(st.state, TransferState::Failed);
        assert!(st
            .error
            .unwrap()
            .starts_with("checksum mismatch: expected 00, got "));
        assert_eq!(std::fs::read(dir.path().join("keep.txt")).unwrap(), b"old");
        // Short, then cancelled: no file at all.
        receive(&mut t, 2, "new.bin", 10);
        t.chunk(&frame(2, b"12345"));
        assert_eq!(
            t.end(&TransferEndEvent {
                transfer_id: 2,
                sha256: String::new()
            })
            .error
            .as_deref(),
            Some("received 5 of 10 bytes")
        );
        receive(&mut t, 3, "other.bin", 10);
        t.chunk(&frame(3, b"12345"));
        t.cancel(3);
        // Too many bytes.
        receive(&mut t, 4, "big.bin", 2);
        t.chunk(&frame(4, b"123"));
        assert_eq!(
            t.end(&TransferEndEvent {
                transfer_id: 4,
                sha256: String::new()
            })
            .error
            .as_deref(),
            Some("received more than the announced 2 bytes")
        );
        assert_eq!(listing(dir.path()), ["keep.txt"]);
    }

    #[test]
    fn destinations_stay_in_the_workspace() {
        let (_dir, mut t) = setup();
        let evt = TransferReceiveEvent {
            transfer_id: 9,
            path: "/etc/evil".into(),
            size: 1,
        };
        let st = t.receive(&evt).unwrap_err();
        assert_eq!(st.state, TransferState::Failed);
        assert!(st.error.unwrap().contains("outside the node workspace"));
    }
}
