use super::*;

#[test]
fn keys_follow_the_r2_layout() {
    let p = WorkspacePath::file("memory/2026-02-18.md").unwrap();
    assert_eq!(
        [
            agent_root("main"),
            workspace_key("main", &p),
            file_key("kate", SOUL_MD),
            daily_memory_path("2026-02-18"),
            daily_memory_key("kate", "2026-02-18"),
            session_archive_key("main", "s-1"),
            session_part_key("main", "s-1", 1708300000000),
            agent_skills_prefix("main"),
            agent_skill_key("main", "github"),
            global_skill_key("github"),
        ],
        [
            "agents/main/",
            "agents/main/memory/2026-02-18.md",
            "agents/kate/SOUL.md",
            "memory/2026-02-18.md",
            "agents/kate/memory/2026-02-18.md",
            "agents/main/sessions/s-1.jsonl.gz",
            "agents/main/sessions/s-1-part1708300000000.jsonl.gz",
            "agents/main/skills/",
            "agents/main/skills/github/SKILL.md",
            "skills/github/SKILL.md",
        ]
    );
}

#[test]
fn skill_files_from_an_undelimited_listing() {
    let listed: Vec<(String, Version)> = [
        ("agents/main/skills/tmux/SKILL.md", "e1"),
        ("agents/main/skills/tmux/scripts/run.sh", "e2"),
        ("agents/main/skills/github/SKILL.md", "e3"),
        ("agents/main/skills/github/docs/SKILL.md", "e4"),
        ("agents/main/skills/SKILL.md", "e5"),
        ("agents/main/skills/notes/README.md", "e6"),
        ("skills/other/SKILL.md", "e7"),
    ]
    .iter()
    .map(|(k, e)| {
        let version = Version {
            etag: e.to_string(),
            uploaded_ms: 0,
        };
        (k.to_string(), version)
    })
    .collect();
    let skill = |dir: &str, key: &str, etag: &str| ListedSkill {
        dir: dir.into(),
        key: key.into(),
        etag: etag.into(),
    };
    assert_eq!(
        skill_md_files("agents/main/skills/", &listed),
        [
            skill("github", "agents/main/skills/github/SKILL.md", "e3"),
            skill("tmux", "agents/main/skills/tmux/SKILL.md", "e1"),
        ]
    );
    assert_eq!(
        skill_md_files(GLOBAL_SKILLS_PREFIX, &listed),
        [skill("other", "skills/other/SKILL.md", "e7")]
    );
}

#[test]
fn utc_dates() {
    assert_eq!(utc_date(0), "1970-01-01");
    assert_eq!(utc_date(1708300000000), "2024-02-18");
    assert_eq!(utc_date(951782400000), "2000-02-29");
    assert_eq!(utc_date(-1), "1969-12-31");
    assert_eq!(
        daily_memory_dates(1709251200000),
        ("2024-03-01".to_string(), "2024-02-29".to_string())
    );
}

#[test]
fn bad_paths_say_why() {
    let cases = [
        ("", "the path is empty; give a file path relative to your workspace, like MEMORY.md"),
        ("/etc/passwd", "absolute paths are not allowed; paths are relative to your workspace root (write memory/notes.md, not /memory/notes.md)"),
        ("memory\\x.md", "backslashes are not allowed; separate folders with /"),
        ("../other/SOUL.md", "`..` is not allowed; paths cannot leave your workspace"),
        ("memory/../../x", "`..` is not allowed; paths cannot leave your workspace"),
        ("./SOUL.md", "`.` segments are not allowed; write a/b, not ./a/b"),
        ("memory//x.md", "empty path segment (a double or trailing /)"),
        ("memory/", "empty path segment (a double or trailing /)"),
        ("a\nb", "control characters are not allowed"),
    ];
    for (path, reason) in cases {
        assert_eq!(
            WorkspacePath::file(path),
            Err(PathError {
                path: path.into(),
                reason
            }),
            "{path:?}"
        );
    }
    assert_eq!(
        WorkspacePath::file("../x").unwrap_err().to_string(),
        "invalid workspace path \"../x\": `..` is not allowed; paths cannot leave your workspace"
    );
}

#[test]
fn good_paths() {
    assert_eq!(WorkspacePath::file("SOUL.md").unwrap().as_str(), "SOUL.md");
    assert_eq!(
        WorkspacePath::file("notes/a b.md").unwrap().as_str(),
        "notes/a b.md"
    );
    for root in ["", "/", "."] {
        assert!(WorkspacePath::dir(root).unwrap().is_root(), "{root:?}");
    }
    assert_eq!(WorkspacePath::dir("memory/").unwrap().as_str(), "memory");
    assert_eq!(
        WorkspacePath::dir("/memory").unwrap_err().reason,
        "absolute paths are not allowed; paths are relative to your workspace root (write memory/notes.md, not /memory/notes.md)"
    );
}

#[test]
fn skills_view_reads_override_then_global_and_writes_override() {
    let p = WorkspacePath::file("skills/github/SKILL.md").unwrap();
    assert_eq!(
        read_candidates("main", &p),
        vec![
            (
                "agents/main/skills/github/SKILL.md".to_string(),
                SkillSource::Agent
            ),
            ("skills/github/SKILL.md".to_string(), SkillSource::Global),
        ]
    );
    assert_eq!(write_key("main", &p), "agents/main/skills/github/SKILL.md");
    let soul = WorkspacePath::file("SOUL.md").unwrap();
    assert_eq!(
        read_candidates("main", &soul),
        vec![("agents/main/SOUL.md".to_string(), SkillSource::Agent)]
    );
    // A file merely named like the folder is not in the view.
    let not_view = WorkspacePath::file("skillsets/x.md").unwrap();
    assert_eq!(read_candidates("main", &not_view).len(), 1);
}

#[test]
fn list_prefixes_and_merged_listing() {
    let root = WorkspacePath::dir("/").unwrap();
    assert_eq!(list_prefixes("main", &root), vec!["agents/main/"]);
    let skills = WorkspacePath::dir("skills").unwrap();
    assert_eq!(
        list_prefixes("main", &skills),
        vec!["agents/main/skills/", "skills/"]
    );
    let one = WorkspacePath::dir("skills/github/").unwrap();
    assert_eq!(
        list_prefixes("main", &one),
        vec!["agents/main/skills/github/", "skills/github/"]
    );
    let merged = listing(
        &skills,
        &[
            (
                "agents/main/skills/".into(),
                vec![],
                vec!["agents/main/skills/github/".into()],
            ),
            (
                "skills/".into(),
                vec![],
                vec!["skills/github/".into(), "skills/tmux/".into()],
            ),
        ],
    );
    assert_eq!(
        merged,
        Listing {
            path: "skills".into(),
            files: vec![],
            directories: vec!["skills/github".into(), "skills/tmux".into()],
        }
    );
    let top = listing(
        &root,
        &[(
            "agents/main/".into(),
            vec!["agents/main/SOUL.md".into(), "agents/main/MEMORY.md".into()],
            vec!["agents/main/memory/".into()],
        )],
    );
    assert_eq!(
        top,
        Listing {
            path: "".into(),
            files: vec!["MEMORY.md".into(), "SOUL.md".into()],
            directories: vec!["memory".into(), "skills".into()],
        }
    );
}

#[test]
fn the_daily_window_holds_exactly_yesterday_and_today() {
    let w = daily_memory_window("kate", "2026-03-01", "2026-02-28");
    assert_eq!(
        w,
        DailyWindow {
            prefix: "agents/kate/memory/".into(),
            start_after: "agents/kate/memory/2026-02-28".into(),
            last: "agents/kate/memory/2026-03-01.md".into(),
        }
    );
    // What R2 returns for the window: keys under the prefix, sorted, after
    // `start_after`, up to `last`.
    let keys = [
        "agents/kate/memory/2026-02-27.md",
        "agents/kate/memory/2026-02-28.md",
        "agents/kate/memory/2026-03-01.md",
        "agents/kate/memory/2026-03-02.md",
        "agents/kate/memory/notes.md",
    ];
    let window: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| {
            k.starts_with(&w.prefix) && *k > w.start_after.as_str() && *k <= w.last.as_str()
        })
        .collect();
    assert_eq!(
        window,
        [
            daily_memory_key("kate", "2026-02-28"),
            daily_memory_key("kate", "2026-03-01")
        ]
    );
}
