//! Reading the node log back: the last lines across rotated files, and
//! following new lines through rotations (`gsv node logs [--follow]`).

use super::rotated_path;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};

const BLOCK: u64 = 64 * 1024;
pub const MAX_LINES: usize = 5000;
/// How far `tail_lines` looks for `node.log.N` (rotation keeps far fewer).
const MAX_ROTATED: usize = 1000;
const FOLLOW_INTERVAL: Duration = Duration::from_millis(250);

/// The last `n` lines (clamped to 1–5000) of `path`, continuing into
/// `path.1`, `path.2`, … while it holds fewer; oldest first. Files are read
/// backwards in blocks, so a large log is not read whole. No log, no lines.
pub fn tail_lines(path: &Path, n: usize) -> io::Result<Vec<String>> {
    let n = n.clamp(1, MAX_LINES);
    match open_if_exists(path)? {
        Some(mut file) => {
            let end = file.metadata()?.len();
            tail_from(path, Some((&mut file, end)), n)
        }
        None => tail_from(path, None, n),
    }
}

/// The last `n` lines (clamped to 1–5000) as [`tail_lines`] reads them,
/// and whether the log holds older lines than these.
pub fn tail_window(path: &Path, n: usize) -> io::Result<(Vec<String>, bool)> {
    let n = n.clamp(1, MAX_LINES);
    // One line more than asked says whether there are more.
    let mut lines = match open_if_exists(path)? {
        Some(mut file) => {
            let end = file.metadata()?.len();
            tail_from(path, Some((&mut file, end)), n + 1)?
        }
        None => tail_from(path, None, n + 1)?,
    };
    let more = lines.len() > n;
    if more {
        lines.remove(0);
    }
    Ok((lines, more))
}

/// Like `tail_lines`, but the current file's part is read from `current`
/// (up to its offset `end`), so that `follow` continues exactly after it.
fn tail_from(path: &Path, current: Option<(&mut File, u64)>, n: usize) -> io::Result<Vec<String>> {
    let mut chunks = Vec::new(); // newest file first
    let mut have = 0;
    if let Some((file, end)) = current {
        let lines = last_lines(file, end, n)?;
        have += lines.len();
        chunks.push(lines);
    }
    for k in 1..=MAX_ROTATED {
        if have >= n {
            break;
        }
        let Some(mut file) = open_if_exists(&rotated_path(path, k))? else {
            break;
        };
        let end = file.metadata()?.len();
        let lines = last_lines(&mut file, end, n - have)?;
        have += lines.len();
        chunks.push(lines);
    }
    Ok(chunks.into_iter().rev().flatten().collect())
}

fn open_if_exists(path: &Path) -> io::Result<Option<File>> {
    match File::open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The last `need` lines of `file[..end]`, reading backwards in blocks.
fn last_lines(file: &mut File, end: u64, need: usize) -> io::Result<Vec<String>> {
    if need == 0 || end == 0 {
        return Ok(Vec::new());
    }
    let mut pos = end;
    let mut buf: Vec<u8> = Vec::new();
    let mut newlines = 0; // in `buf`, not counting a final one
    loop {
        let start = pos.saturating_sub(BLOCK);
        let mut block = vec![0; (pos - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        let counted = if buf.is_empty() {
            block.strip_suffix(b"\n").unwrap_or(&block)
        } else {
            &block[..]
        };
        newlines += counted.iter().filter(|&&b| b == b'\n').count();
        block.extend_from_slice(&buf);
        buf = block;
        pos = start;
        // `need` newlines mean `need` whole lines after the first one.
        if pos == 0 || newlines >= need {
            break;
        }
    }
    let body = buf.strip_suffix(b"\n").unwrap_or(&buf);
    let mut segments: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    if pos > 0 {
        segments.remove(0); // starts mid-line
    }
    let skip = segments.len().saturating_sub(need);
    Ok(segments[skip..]
        .iter()
        .map(|s| String::from_utf8_lossy(s.strip_suffix(b"\r").unwrap_or(s)).into_owned())
        .collect())
}

/// Writes the last `from_end_lines` lines (0 for none), then each line
/// appended afterwards, following `path` through rotations (a new inode) and
/// truncation (a shorter file). Runs until dropped or the writer fails.
pub async fn follow<W: AsyncWrite + Unpin>(
    path: &Path,
    from_end_lines: usize,
    writer: W,
) -> io::Result<()> {
    follow_every(path, from_end_lines, writer, FOLLOW_INTERVAL).await
}

pub(super) async fn follow_every<W: AsyncWrite + Unpin>(
    path: &Path,
    from_end_lines: usize,
    mut writer: W,
    interval: Duration,
) -> io::Result<()> {
    let mut current = Tracked::open(path, false)?;
    if from_end_lines > 0 {
        let n = from_end_lines.min(MAX_LINES);
        let lines = match current.as_mut() {
            Some(t) => tail_from(path, Some((&mut t.file, t.pos)), n)?,
            None => tail_from(path, None, n)?,
        };
        for line in lines {
            writer.write_all(line.as_bytes()).await?;
            writer.write_all(b"\n").await?;
        }
        writer.flush().await?;
    }
    loop {
        if let Some(t) = current.as_mut() {
            t.copy_new_lines(&mut writer).await?;
        }
        let meta = match std::fs::metadata(path) {
            Ok(meta) => Some(meta),
            // Between a rotation's rename and the new file, or not yet created.
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        if let Some(meta) = meta {
            match current.as_mut() {
                Some(t) if file_id(&meta) == t.id => {
                    if meta.len() < t.pos {
                        t.file.seek(SeekFrom::Start(0))?;
                        t.pos = 0;
                        t.partial.clear();
                    }
                }
                old => {
                    // Replaced (or newly created): finish the old file first.
                    if let Some(t) = old {
                        t.copy_new_lines(&mut writer).await?;
                        t.flush_partial(&mut writer).await?;
                        copy_skipped_files(path, t.id, &mut writer).await?;
                    }
                    current = Tracked::open(path, true)?;
                    continue;
                }
            }
        }
        tokio::time::sleep(interval).await;
    }
}

/// After several rotations between two polls the followed file is now
/// `path.k` with k > 1: `path.{k-1}` … `path.1` were written meanwhile.
async fn copy_skipped_files<W: AsyncWrite + Unpin>(
    path: &Path,
    followed: (u64, u64),
    writer: &mut W,
) -> io::Result<()> {
    let mut now_at = None;
    for k in 1..=MAX_ROTATED {
        match std::fs::metadata(rotated_path(path, k)) {
            Ok(meta) if file_id(&meta) == followed => {
                now_at = Some(k);
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    for k in (1..now_at.unwrap_or(1)).rev() {
        let Some(mut file) = open_if_exists(&rotated_path(path, k))? else {
            continue;
        };
        let mut data = Vec::new();
        file.read_to_end(&mut data)?;
        if !data.is_empty() && !data.ends_with(b"\n") {
            data.push(b'\n');
        }
        writer.write_all(&data).await?;
    }
    writer.flush().await
}

struct Tracked {
    file: File,
    id: (u64, u64),
    /// Bytes of `file` consumed so far.
    pos: u64,
    /// The start of a line whose newline has not been written yet.
    partial: Vec<u8>,
}

impl Tracked {
    /// Opened at its start (a file that replaced the one followed), or at its
    /// current end (the file whose tail was just printed).
    fn open(path: &Path, from_start: bool) -> io::Result<Option<Self>> {
        let Some(file) = open_if_exists(path)? else {
            return Ok(None);
        };
        let meta = file.metadata()?;
        Ok(Some(Self {
            id: file_id(&meta),
            pos: if from_start { 0 } else { meta.len() },
            file,
            partial: Vec::new(),
        }))
    }

    async fn copy_new_lines<W: AsyncWrite + Unpin>(&mut self, writer: &mut W) -> io::Result<()> {
        let mut data = Vec::new();
        self.file.seek(SeekFrom::Start(self.pos))?;
        self.pos += self.file.read_to_end(&mut data)? as u64;
        let Some(last_newline) = data.iter().rposition(|&b| b == b'\n') else {
            self.partial.extend_from_slice(&data);
            return Ok(());
        };
        writer.write_all(&self.partial).await?;
        writer.write_all(&data[..=last_newline]).await?;
        writer.flush().await?;
        self.partial = data[last_newline + 1..].to_vec();
        Ok(())
    }

    async fn flush_partial<W: AsyncWrite + Unpin>(&mut self, writer: &mut W) -> io::Result<()> {
        if !self.partial.is_empty() {
            writer.write_all(&self.partial).await?;
            writer.write_all(b"\n").await?;
            writer.flush().await?;
            self.partial.clear();
        }
        Ok(())
    }
}

#[cfg(unix)]
fn file_id(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}
