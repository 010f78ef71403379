//! `gsv workspace ls|cat|put|rm|edit|refresh`: the agent's workspace files
//! (MEMORY.md, memory/…, skills/…), over the socket.

use super::GatewayTarget;
use crate::cli::{WorkspaceArgs, WorkspaceCommand};
use crate::connection::RequestError;
use anyhow::{anyhow, bail, Context, Result};
use gsv_protocol::{
    codes, method, NoParams, SkillSource, WorkspaceDeleteParams, WorkspaceDeleteResult,
    WorkspaceListParams, WorkspaceListResult, WorkspaceReadParams, WorkspaceReadResult,
    WorkspaceWriteParams, WorkspaceWriteResult,
};
use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use tempfile::TempPath;

/// Where a command reads and writes; tests pass buffers.
pub struct Streams<'a> {
    pub input: &'a mut dyn Read,
    /// Whether `input` is a terminal: `put` then says how to end the text.
    pub input_is_terminal: bool,
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

pub async fn run(target: &GatewayTarget, args: WorkspaceArgs) -> Result<()> {
    let visual = std::env::var("VISUAL").ok();
    let editor = std::env::var("EDITOR").ok();
    let editor = editor_command(visual.as_deref(), editor.as_deref());
    let mut input = std::io::stdin();
    let mut streams = Streams {
        input_is_terminal: input.is_terminal(),
        input: &mut input,
        out: &mut std::io::stdout(),
        err: &mut std::io::stderr(),
    };
    execute(target, args, &editor, &mut streams).await
}

/// Runs one workspace command; `editor` is the command line `edit` runs
/// (the file's path is added as its last argument).
pub async fn execute(
    target: &GatewayTarget,
    args: WorkspaceArgs,
    editor: &[String],
    io: &mut Streams<'_>,
) -> Result<()> {
    let agent_id = args.agent;
    match args.command {
        WorkspaceCommand::Ls { path } => {
            let conn = target.connect().await?;
            let params = WorkspaceListParams { path, agent_id };
            let listing: WorkspaceListResult = conn.call::<method::WorkspaceList>(&params).await?;
            io.out.write_all(render_listing(&listing).as_bytes())?;
            if listing.directories.is_empty() && listing.files.is_empty() {
                writeln!(
                    io.err,
                    "{} is empty or does not exist",
                    shown_dir(&listing.path)
                )?;
            }
        }
        WorkspaceCommand::Cat { path } => {
            let conn = target.connect().await?;
            let params = WorkspaceReadParams { path, agent_id };
            let file: WorkspaceReadResult = conn.call::<method::WorkspaceRead>(&params).await?;
            io.out.write_all(file.content.as_bytes())?;
        }
        WorkspaceCommand::Put { path, file } => {
            // Read first: a missing or binary file needs no gateway to be refused.
            let content = read_content(file.as_deref(), io)?;
            let conn = target.connect().await?;
            let params = WorkspaceWriteParams {
                path,
                content,
                agent_id,
                expected_etag: None,
            };
            let written: WorkspaceWriteResult =
                conn.call::<method::WorkspaceWrite>(&params).await?;
            writeln!(
                io.err,
                "Wrote {} ({})",
                written.path,
                byte_count(written.size)
            )?;
        }
        WorkspaceCommand::Rm { path } => {
            let conn = target.connect().await?;
            let params = WorkspaceDeleteParams { path, agent_id };
            let deleted: WorkspaceDeleteResult =
                conn.call::<method::WorkspaceDelete>(&params).await?;
            writeln!(io.out, "Deleted {}", deleted.path)?;
        }
        WorkspaceCommand::Edit { path } => edit(target, path, agent_id, editor, io).await?,
        WorkspaceCommand::Refresh => {
            let conn = target.connect().await?;
            conn.call::<method::WorkspaceRefresh>(&NoParams).await?;
            writeln!(
                io.out,
                "The agent's next runs read the workspace again (edits made outside the gateway included)."
            )?;
        }
    }
    io.out.flush()?;
    Ok(())
}

async fn edit(
    target: &GatewayTarget,
    path: String,
    agent_id: Option<String>,
    editor: &[String],
    io: &mut Streams<'_>,
) -> Result<()> {
    let mut conn = target.connect().await?;
    let params = WorkspaceReadParams {
        path: path.clone(),
        agent_id: agent_id.clone(),
    };
    let original = match conn.call::<method::WorkspaceRead>(&params).await {
        Ok(file) => {
            if file.resolved_source == Some(SkillSource::Global) {
                writeln!(
                    io.err,
                    "({path} is a global skill: saving creates this agent's own copy)"
                )?;
            }
            file.content
        }
        Err(e) if is_missing_file(&e) => {
            writeln!(
                io.err,
                "({path} does not exist yet: it is created when you save)"
            )?;
            String::new()
        }
        Err(e) => return Err(e.into()),
    };

    // Removed when dropped, however this function ends.
    let temp = temp_file_for(&path, &original)?;
    let exit = run_editor(editor, &temp).await;
    match decide_edit(&original, exit) {
        EditDecision::Abort(why) => bail!("{why}; nothing was saved"),
        EditDecision::NoChanges => writeln!(io.out, "No changes")?,
        EditDecision::Save(content) => {
            // The editor may have been open for long enough to lose the socket.
            if conn.close_reason().is_some() {
                conn = target.connect().await?;
            }
            let params = WorkspaceWriteParams {
                path: path.clone(),
                content,
                agent_id,
                expected_etag: None,
            };
            let _: WorkspaceWriteResult = conn.call::<method::WorkspaceWrite>(&params).await?;
            writeln!(io.out, "Saved {path}")?;
        }
    }
    drop(temp);
    Ok(())
}

/// The gateway answers 404 for a file that does not exist, and also for a
/// method it does not know: only the first means "start empty".
fn is_missing_file(error: &RequestError) -> bool {
    matches!(error, RequestError::Gateway(e)
        if e.code == codes::NOT_FOUND && !e.message.starts_with("Unknown method"))
}

/// Directories (with a trailing `/`) then files, one per line, as the
/// gateway names them (workspace-relative).
fn render_listing(listing: &WorkspaceListResult) -> String {
    let dirs = listing
        .directories
        .iter()
        .map(|d| format!("{}/\n", d.trim_end_matches('/')));
    let files = listing.files.iter().map(|f| format!("{f}\n"));
    dirs.chain(files).collect()
}

fn shown_dir(path: &str) -> String {
    match path.trim_end_matches('/') {
        "" => "The workspace".to_string(),
        dir => format!("{dir}/"),
    }
}

fn byte_count(n: u64) -> String {
    match n {
        1 => "1 byte".to_string(),
        n => format!("{n} bytes"),
    }
}

/// `put`'s content: FILE, or standard input when FILE is absent or `-`.
fn read_content(file: Option<&Path>, io: &mut Streams<'_>) -> Result<String> {
    match file.filter(|f| *f != Path::new("-")) {
        Some(file) => {
            let bytes =
                std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
            utf8_text(bytes, &file.display().to_string())
        }
        None => {
            if io.input_is_terminal {
                writeln!(
                    io.err,
                    "Type the new content, then press Ctrl-D on an empty line."
                )?;
            }
            let mut bytes = Vec::new();
            io.input
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            utf8_text(bytes, "standard input")
        }
    }
}

fn utf8_text(bytes: Vec<u8>, source: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{source} is not UTF-8 text (invalid byte at offset {}); the workspace holds \
             text files only, so nothing was written",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The editor to run: `$VISUAL`, else `$EDITOR`, else `vi`. The value is
/// split on whitespace so that `code --wait` works.
pub fn editor_command(visual: Option<&str>, editor: Option<&str>) -> Vec<String> {
    [visual, editor]
        .into_iter()
        .flatten()
        .map(|value| value.split_whitespace().map(String::from).collect())
        .find(|argv: &Vec<String>| !argv.is_empty())
        .unwrap_or_else(|| vec!["vi".to_string()])
}

/// Prefix and suffix of the temporary file for workspace `path`: the file's
/// name (in the editor's title) and its extension (for highlighting).
fn temp_name_parts(path: &str) -> (String, String) {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, suffix) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| if safe(c) { c } else { '_' })
            .take(40)
            .collect()
    };
    (format!("gsv-{}-", clean(stem)), clean(&suffix))
}

/// A private temporary file holding `content`, closed so any editor can
/// replace it; it is deleted when the returned path is dropped.
fn temp_file_for(path: &str, content: &str) -> Result<TempPath> {
    let (prefix, suffix) = temp_name_parts(path);
    let mut file = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(&suffix)
        .tempfile()
        .context("cannot create a temporary file to edit")?;
    file.write_all(content.as_bytes())
        .and_then(|()| file.flush())
        .context("cannot write the temporary file to edit")?;
    Ok(file.into_temp_path())
}

/// How the editor run ended.
#[derive(Debug)]
enum EditorExit {
    /// It exited with status 0; the file's bytes afterwards.
    Done(Vec<u8>),
    /// It could not start or failed, or the file could not be read back.
    Failed(String),
}

async fn run_editor(editor: &[String], file: &Path) -> EditorExit {
    let Some((program, args)) = editor.split_first() else {
        return EditorExit::Failed("no editor is set (set $VISUAL or $EDITOR)".into());
    };
    let shown = editor.join(" ");
    let mut command = std::process::Command::new(program);
    command.args(args).arg(file);
    // The editor takes over the terminal; wait for it off the async threads.
    let status = tokio::task::spawn_blocking(move || command.status()).await;
    match status {
        Err(e) => EditorExit::Failed(format!("the editor `{shown}` could not be run: {e}")),
        Ok(Err(e)) => EditorExit::Failed(format!(
            "cannot start the editor `{shown}`: {e}. Set $VISUAL or $EDITOR to your editor, \
             e.g. EDITOR=nano"
        )),
        Ok(Ok(status)) if !status.success() => EditorExit::Failed(match status.code() {
            Some(code) => format!("the editor `{shown}` exited with status {code}"),
            None => format!("the editor `{shown}` was stopped by a signal"),
        }),
        Ok(Ok(_)) => match std::fs::read(file) {
            Ok(bytes) => EditorExit::Done(bytes),
            Err(e) => EditorExit::Failed(format!(
                "cannot read the edited file {}: {e}",
                file.display()
            )),
        },
    }
}

#[derive(Debug, PartialEq)]
enum EditDecision {
    Save(String),
    NoChanges,
    /// Why nothing may be saved.
    Abort(String),
}

fn decide_edit(original: &str, exit: EditorExit) -> EditDecision {
    match exit {
        EditorExit::Failed(why) => EditDecision::Abort(why),
        EditorExit::Done(bytes) => match String::from_utf8(bytes) {
            Err(e) => EditDecision::Abort(format!(
                "the edited file is not UTF-8 text (invalid byte at offset {}); the workspace \
                 holds text files only",
                e.utf8_error().valid_up_to()
            )),
            Ok(edited) if edited == original => EditDecision::NoChanges,
            Ok(edited) => EditDecision::Save(edited),
        },
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
