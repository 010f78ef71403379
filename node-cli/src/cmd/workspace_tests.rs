use super::*;
use crate::cli::{Cli, Command};
use crate::test_support::{Answer, CannedGateway};
use clap::Parser;
use gsv_protocol::ErrorShape;
use serde_json::{json, Value};
use std::path::PathBuf;

/// What a command printed and how it ended (`Err` as `main` shows it).
type Ran = (String, String, Result<(), String>);

/// Runs `gsv workspace ARGS…` against `gateway`, with `stdin` as input.
async fn run_against(
    gateway: &CannedGateway,
    args: &[&str],
    stdin: &[u8],
    editor: &[String],
) -> Ran {
    let argv = ["gsv", "workspace"].iter().chain(args);
    let Command::Workspace(args) = Cli::try_parse_from(argv).unwrap().command else {
        panic!("not a workspace command")
    };
    let target = GatewayTarget {
        url: gateway.url().to_string(),
        token: None,
    };
    let (mut out, mut err, mut input) = (Vec::new(), Vec::new(), stdin);
    let mut streams = Streams {
        input: &mut input,
        input_is_terminal: false,
        out: &mut out,
        err: &mut err,
    };
    let result = execute(&target, args, editor, &mut streams)
        .await
        .map_err(|e| format!("{e:#}"));
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        result,
    )
}

fn not_found(path: &str) -> Answer {
    Err(ErrorShape::new(
        gsv_protocol::codes::NOT_FOUND,
        format!("{path} does not exist in the workspace of agent main"),
    ))
}

/// The gateway's answer to `workspace.write`.
fn written(params: &Value) -> Answer {
    let size = params["content"].as_str().unwrap().len();
    Ok(json!({"path": params["path"], "size": size, "written": true}))
}

fn listing(path: &str, files: &[&str], directories: &[&str]) -> WorkspaceListResult {
    WorkspaceListResult {
        path: path.into(),
        files: files.iter().map(|f| f.to_string()).collect(),
        directories: directories.iter().map(|d| d.to_string()).collect(),
    }
}

// ---- pure parts ----

#[test]
fn listings_show_directories_then_files() {
    let rendered: Vec<String> = [
        listing(
            "",
            &["AGENTS.md", "MEMORY.md"],
            &["memory", "skills/"], // a trailing / is not doubled
        ),
        listing(
            "memory",
            &["memory/2026-02-17.md", "memory/2026-02-18.md"],
            &[],
        ),
        listing("notes", &[], &[]),
    ]
    .iter()
    .map(render_listing)
    .collect();
    assert_eq!(
        rendered,
        vec![
            "memory/\nskills/\nAGENTS.md\nMEMORY.md\n",
            "memory/2026-02-17.md\nmemory/2026-02-18.md\n",
            "",
        ]
    );
}

#[test]
fn edit_decisions() {
    let decided = [
        decide_edit("# Memory\n", EditorExit::Done(b"# Memory\n".to_vec())),
        decide_edit(
            "# Memory\n",
            EditorExit::Done(b"# Memory\n- tea\n".to_vec()),
        ),
        decide_edit("", EditorExit::Done(Vec::new())),
        decide_edit("", EditorExit::Done(b"new\n".to_vec())),
        decide_edit(
            "# Memory\n",
            EditorExit::Failed("the editor `vim` exited with status 1".into()),
        ),
        decide_edit("a", EditorExit::Done(vec![b'a', 0xff])),
    ];
    assert_eq!(
        decided,
        [
            EditDecision::NoChanges,
            EditDecision::Save("# Memory\n- tea\n".into()),
            EditDecision::NoChanges,
            EditDecision::Save("new\n".into()),
            EditDecision::Abort("the editor `vim` exited with status 1".into()),
            EditDecision::Abort(
                "the edited file is not UTF-8 text (invalid byte at offset 1); the workspace \
                 holds text files only"
                    .into()
            ),
        ]
    );
}

#[test]
fn editor_comes_from_visual_then_editor_then_vi() {
    let chosen: Vec<Vec<String>> = [
        (Some("nvim"), Some("nano")),
        (None, Some("code --wait")),
        (Some("  "), Some("  emacs  -nw ")),
        (Some(""), None),
        (None, None),
    ]
    .iter()
    .map(|(visual, editor)| editor_command(*visual, *editor))
    .collect();
    let expected: Vec<Vec<&str>> = vec![
        vec!["nvim"],
        vec!["code", "--wait"],
        vec!["emacs", "-nw"],
        vec!["vi"],
        vec!["vi"],
    ];
    assert_eq!(chosen, expected);
}

#[test]
fn temp_files_keep_the_name_and_extension() {
    let parts: Vec<(String, String)> = [
        "MEMORY.md",
        "skills/web search/SKILL.md",
        "notes/todo",
        "memory/2026-02-18.md",
        ".env",
    ]
    .iter()
    .map(|p| temp_name_parts(p))
    .collect();
    let expected: Vec<(&str, &str)> = vec![
        ("gsv-MEMORY-", ".md"),
        ("gsv-SKILL-", ".md"),
        ("gsv-todo-", ""),
        ("gsv-2026-02-18-", ".md"),
        ("gsv-.env-", ""),
    ];
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(a, b)| (a.into(), b.into()))
        .collect();
    assert_eq!(parts, expected);
}

#[test]
fn missing_files_are_told_from_unknown_methods() {
    let errors = [
        RequestError::Gateway(ErrorShape::new(
            gsv_protocol::codes::NOT_FOUND,
            "MEMORY.md does not exist",
        )),
        RequestError::Gateway(ErrorShape::new(
            gsv_protocol::codes::NOT_FOUND,
            "Unknown method: workspace.read",
        )),
        RequestError::Gateway(ErrorShape::new(
            gsv_protocol::codes::BAD_REQUEST,
            "invalid workspace path",
        )),
    ];
    let missing: Vec<bool> = errors.iter().map(is_missing_file).collect();
    assert_eq!(missing, vec![true, false, false]);
}

// ---- commands against a fake gateway ----

#[tokio::test]
async fn ls_lists_the_root_and_a_directory() {
    let gateway = CannedGateway::start(|method, params| {
        assert_eq!(method, "workspace.list");
        Ok(match params["path"].as_str() {
            None => json!({"path": "", "files": ["AGENTS.md", "MEMORY.md"],
                "directories": ["memory", "skills"]}),
            Some("memory") => json!({"path": "memory",
                "files": ["memory/2026-02-18.md"], "directories": []}),
            Some(other) => json!({"path": other, "files": [], "directories": []}),
        })
    })
    .await;
    let runs = [
        run_against(&gateway, &["ls"], b"", &[]).await,
        run_against(&gateway, &["ls", "memory", "--agent", "work"], b"", &[]).await,
        run_against(&gateway, &["ls", "nope/"], b"", &[]).await,
    ];
    assert_eq!(
        runs,
        [
            (
                "memory/\nskills/\nAGENTS.md\nMEMORY.md\n".into(),
                "".into(),
                Ok(())
            ),
            ("memory/2026-02-18.md\n".into(), "".into(), Ok(())),
            (
                "".into(),
                "nope/ is empty or does not exist\n".into(),
                Ok(())
            ),
        ]
    );
    assert_eq!(
        gateway.requests(),
        vec![
            ("workspace.list".into(), json!({})),
            (
                "workspace.list".into(),
                json!({"path": "memory", "agentId": "work"})
            ),
            ("workspace.list".into(), json!({"path": "nope/"})),
        ]
    );
}

#[tokio::test]
async fn cat_prints_the_content_exactly() {
    let gateway = CannedGateway::start(|_, params| {
        let content = match params["path"].as_str().unwrap() {
            "MEMORY.md" => "# Memory\n\n- likes tea\n",
            "notes/raw.txt" => "no final newline",
            path => return not_found(path),
        };
        Ok(json!({"path": params["path"], "content": content, "size": content.len()}))
    })
    .await;
    let runs = [
        run_against(&gateway, &["cat", "MEMORY.md"], b"", &[]).await,
        run_against(&gateway, &["cat", "notes/raw.txt", "-a", "main"], b"", &[]).await,
        run_against(&gateway, &["cat", "GONE.md"], b"", &[]).await,
    ];
    assert_eq!(
        runs,
        [
            ("# Memory\n\n- likes tea\n".into(), "".into(), Ok(())),
            ("no final newline".into(), "".into(), Ok(())),
            (
                "".into(),
                "".into(),
                Err("GONE.md does not exist in the workspace of agent main (code 404)".into())
            ),
        ]
    );
    assert_eq!(
        gateway.requests(),
        vec![
            ("workspace.read".into(), json!({"path": "MEMORY.md"})),
            (
                "workspace.read".into(),
                json!({"path": "notes/raw.txt", "agentId": "main"})
            ),
            ("workspace.read".into(), json!({"path": "GONE.md"})),
        ]
    );
}

#[tokio::test]
async fn put_writes_a_file_or_standard_input() {
    let gateway = CannedGateway::start(|method, params| {
        assert_eq!(method, "workspace.write");
        written(params)
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.md");
    std::fs::write(&plan, "# Plan\n").unwrap();
    let plan = plan.to_str().unwrap();

    let runs = [
        run_against(&gateway, &["put", "notes/plan.md", plan], b"", &[]).await,
        run_against(&gateway, &["put", "memory/prefs.md"], b"- tea\n", &[]).await,
        run_against(
            &gateway,
            &["put", "x.md", "-", "--agent", "work"],
            b"!",
            &[],
        )
        .await,
    ];
    assert_eq!(
        runs,
        [
            ("".into(), "Wrote notes/plan.md (7 bytes)\n".into(), Ok(())),
            (
                "".into(),
                "Wrote memory/prefs.md (6 bytes)\n".into(),
                Ok(())
            ),
            ("".into(), "Wrote x.md (1 byte)\n".into(), Ok(())),
        ]
    );
    assert_eq!(
        gateway.requests(),
        vec![
            (
                "workspace.write".into(),
                json!({"path": "notes/plan.md", "content": "# Plan\n"})
            ),
            (
                "workspace.write".into(),
                json!({"path": "memory/prefs.md", "content": "- tea\n"})
            ),
            (
                "workspace.write".into(),
                json!({"path": "x.md", "content": "!", "agentId": "work"})
            ),
        ]
    );
}

#[tokio::test]
async fn put_refuses_binary_and_missing_input_without_writing() {
    let gateway = CannedGateway::start(|_, params| written(params)).await;
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("logo.png");
    std::fs::write(&image, b"\x89PNG\r\n").unwrap();
    let missing: PathBuf = dir.path().join("missing.md");
    let (image, missing) = (image.to_str().unwrap(), missing.to_str().unwrap());

    let runs = [
        run_against(&gateway, &["put", "logo.png", image], b"", &[]).await,
        run_against(&gateway, &["put", "a.md"], b"ok\xc3(", &[]).await,
        run_against(&gateway, &["put", "a.md", missing], b"", &[]).await,
    ];
    assert_eq!(
        runs,
        [
            (
                "".into(),
                "".into(),
                Err(format!(
                    "{image} is not UTF-8 text (invalid byte at offset 0); the workspace holds \
                     text files only, so nothing was written"
                ))
            ),
            (
                "".into(),
                "".into(),
                Err(
                    "standard input is not UTF-8 text (invalid byte at offset 2); the workspace \
                     holds text files only, so nothing was written"
                        .into()
                )
            ),
            (
                "".into(),
                "".into(),
                Err(format!(
                    "cannot read {missing}: No such file or directory (os error 2)"
                ))
            ),
        ]
    );
    assert_eq!(gateway.requests(), vec![]);
}

#[tokio::test]
async fn rm_deletes_and_gateway_errors_show_plainly() {
    let gateway = CannedGateway::start(|method, params| {
        let path = params["path"].as_str().unwrap();
        match (method, path) {
            (_, "../x") => Err(ErrorShape::new(
                gsv_protocol::codes::BAD_REQUEST,
                "invalid workspace path \"../x\": `..` is not allowed; paths cannot leave \
                 your workspace",
            )),
            ("workspace.delete", "notes/plan.md") => {
                Ok(json!({"path": "notes/plan.md", "deleted": true}))
            }
            _ => not_found(path),
        }
    })
    .await;
    let runs = [
        run_against(&gateway, &["rm", "notes/plan.md"], b"", &[]).await,
        run_against(
            &gateway,
            &["rm", "notes/plan.md", "--agent", "work"],
            b"",
            &[],
        )
        .await,
        run_against(&gateway, &["rm", "notes/gone.md"], b"", &[]).await,
        run_against(&gateway, &["rm", "../x"], b"", &[]).await,
    ];
    assert_eq!(
        runs,
        [
            ("Deleted notes/plan.md\n".into(), "".into(), Ok(())),
            ("Deleted notes/plan.md\n".into(), "".into(), Ok(())),
            (
                "".into(),
                "".into(),
                Err(
                    "notes/gone.md does not exist in the workspace of agent main (code 404)".into()
                )
            ),
            (
                "".into(),
                "".into(),
                Err(
                    "invalid workspace path \"../x\": `..` is not allowed; paths cannot leave \
                     your workspace (code 400)"
                        .into()
                )
            ),
        ]
    );
    assert_eq!(
        gateway.requests(),
        vec![
            ("workspace.delete".into(), json!({"path": "notes/plan.md"})),
            (
                "workspace.delete".into(),
                json!({"path": "notes/plan.md", "agentId": "work"})
            ),
            ("workspace.delete".into(), json!({"path": "notes/gone.md"})),
            ("workspace.delete".into(), json!({"path": "../x"})),
        ]
    );
}

// ---- edit, with shell scripts as the editor ----

/// A gateway whose workspace holds MEMORY.md and a global skill; writes succeed.
async fn editable_gateway() -> CannedGateway {
    CannedGateway::start(|method, params| {
        let path = params["path"].as_str().unwrap();
        match (method, path) {
            ("workspace.write", _) => written(params),
            ("workspace.read", "MEMORY.md") => Ok(json!({"path": "MEMORY.md",
                "content": "# Memory\n", "size": 9, "lastModified": 1_700_000_000_000_i64})),
            ("workspace.read", "skills/web/SKILL.md") => Ok(json!({"path": path,
                "content": "# Web\n", "size": 6, "resolvedPath": "skills/web/SKILL.md",
                "resolvedSource": "global"})),
            ("workspace.read", "OLD.md") => Err(ErrorShape::new(
                gsv_protocol::codes::NOT_FOUND,
                "Unknown method: workspace.read",
            )),
            _ => not_found(path),
        }
    })
    .await
}

/// `EDITOR="sh <dir>/<name>.sh"` running `body`; each run records the file
/// it was given in `<dir>/seen`. (Run through `sh` so that no freshly
/// written executable is exec'd while another test forks: ETXTBSY.)
fn fake_editor(dir: &Path, name: &str, body: &str) -> Vec<String> {
    let script = dir.join(format!("{name}.sh"));
    let seen = dir.join("seen");
    let text = format!("printf '%s' \"$1\" > '{}'\n{body}\n", seen.display());
    std::fs::write(&script, text).unwrap();
    editor_command(None, Some(&format!("sh {}", script.display())))
}

/// The file the fake editor was given; it must be gone by now.
fn edited_file(dir: &Path) -> PathBuf {
    let seen = PathBuf::from(std::fs::read_to_string(dir.join("seen")).unwrap());
    assert!(!seen.exists(), "{} was not removed", seen.display());
    seen
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_str().unwrap().to_string()
}

#[tokio::test]
async fn edit_saves_a_changed_file() {
    let gateway = editable_gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let editor = fake_editor(dir.path(), "append", "printf -- '- tea\\n' >> \"$1\"");

    let ran = run_against(&gateway, &["edit", "MEMORY.md", "-a", "main"], b"", &editor).await;
    assert_eq!(ran, ("Saved MEMORY.md\n".into(), "".into(), Ok(())));
    assert_eq!(
        gateway.requests(),
        vec![
            (
                "workspace.read".into(),
                json!({"path": "MEMORY.md", "agentId": "main"})
            ),
            (
                "workspace.write".into(),
                json!({"path": "MEMORY.md", "content": "# Memory\n- tea\n", "agentId": "main"})
            ),
        ]
    );
    let name = file_name(&edited_file(dir.path()));
    assert!(
        name.starts_with("gsv-MEMORY-") && name.ends_with(".md"),
        "{name}"
    );
}

#[tokio::test]
async fn edit_of_a_new_file_starts_empty() {
    let gateway = editable_gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let editor = fake_editor(dir.path(), "append", "printf -- '- tea\\n' >> \"$1\"");

    let ran = run_against(&gateway, &["edit", "notes/new.txt"], b"", &editor).await;
    assert_eq!(
        ran,
        (
            "Saved notes/new.txt\n".into(),
            "(notes/new.txt does not exist yet: it is created when you save)\n".into(),
            Ok(())
        )
    );
    assert_eq!(
        gateway.requests(),
        vec![
            ("workspace.read".into(), json!({"path": "notes/new.txt"})),
            (
                "workspace.write".into(),
                json!({"path": "notes/new.txt", "content": "- tea\n"})
            ),
        ]
    );
    let name = file_name(&edited_file(dir.path()));
    assert!(
        name.starts_with("gsv-new-") && name.ends_with(".txt"),
        "{name}"
    );
}

#[tokio::test]
async fn edit_of_a_global_skill_says_it_makes_a_copy() {
    let gateway = editable_gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let editor = fake_editor(dir.path(), "append", "printf 'More.\\n' >> \"$1\"");

    let ran = run_against(&gateway, &["edit", "skills/web/SKILL.md"], b"", &editor).await;
    assert_eq!(
        ran,
        (
            "Saved skills/web/SKILL.md\n".into(),
            "(skills/web/SKILL.md is a global skill: saving creates this agent's own copy)\n"
                .into(),
            Ok(())
        )
    );
    assert_eq!(
        gateway.requests()[1],
        (
            "workspace.write".into(),
            json!({"path": "skills/web/SKILL.md", "content": "# Web\nMore.\n"})
        )
    );
}

#[tokio::test]
async fn edit_without_changes_writes_nothing() {
    let gateway = editable_gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let editor = fake_editor(dir.path(), "look", "test -s \"$1\"");

    let ran = run_against(&gateway, &["edit", "MEMORY.md"], b"", &editor).await;
    assert_eq!(ran, ("No changes\n".into(), "".into(), Ok(())));
    assert_eq!(
        gateway.requests(),
        vec![("workspace.read".into(), json!({"path": "MEMORY.md"}))]
    );
    edited_file(dir.path());
}

#[tokio::test]
async fn edit_writes_nothing_when_the_editor_fails() {
    let gateway = editable_gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let editor = fake_editor(dir.path(), "fail", "echo changed >> \"$1\"; exit 1");
    let shown = editor.join(" ");

    let ran = run_against(&gateway, &["edit", "MEMORY.md"], b"", &editor).await;
    assert_eq!(
        ran,
        (
            "".into(),
            "".into(),
            Err(format!(
                "the editor `{shown}` exited with status 1; nothing was saved"
            ))
        )
    );
    assert_eq!(
        gateway.requests(),
        vec![("workspace.read".into(), json!({"path": "MEMORY.md"}))]
    );
    edited_file(dir.path());
}

#[tokio::test]
async fn edit_explains_an_editor_that_cannot_start() {
    let gateway = editable_gateway().await;
    let editor = editor_command(None, Some("gsv-no-such-editor --wait"));

    let ran = run_against(&gateway, &["edit", "MEMORY.md"], b"", &editor).await;
    assert_eq!(
        ran,
        (
            "".into(),
            "".into(),
            Err(
                "cannot start the editor `gsv-no-such-editor --wait`: No such file or \
                 directory (os error 2). Set $VISUAL or $EDITOR to your editor, e.g. \
                 EDITOR=nano; nothing was saved"
                    .into()
            )
        )
    );
}

#[tokio::test]
async fn edit_does_not_start_empty_when_the_gateway_lacks_the_method() {
    let gateway = editable_gateway().await;
    let dir = tempfile::tempdir().unwrap();
    let editor = fake_editor(dir.path(), "append", "echo x >> \"$1\"");

    let ran = run_against(&gateway, &["edit", "OLD.md"], b"", &editor).await;
    assert_eq!(
        ran,
        (
            "".into(),
            "".into(),
            Err("Unknown method: workspace.read (code 404)".into())
        )
    );
    assert!(!dir.path().join("seen").exists(), "the editor ran");
}
