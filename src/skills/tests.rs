use super::*;
use crate::config::Config;
use serde_json::json;
use std::collections::BTreeMap;

fn host(
    id: &str,
    role: &str,
    caps: &[&str],
    os: &str,
    env: &[&str],
    bins: &[(&str, bool)],
) -> HostInfo {
    HostInfo {
        node_id: id.into(),
        host_role: role.into(),
        host_capabilities: caps.iter().map(|s| s.to_string()).collect(),
        host_os: Some(os.into()),
        host_env: env.iter().map(|s| s.to_string()).collect(),
        host_bin_status: bins
            .iter()
            .map(|(b, ok)| (b.to_string(), *ok))
            .collect::<BTreeMap<_, _>>(),
        host_bin_status_updated_at: Some(1000),
        no_bin_probes: false,
    }
}

fn hosts() -> Vec<HostInfo> {
    vec![
        host(
            "server",
            "execution",
            &[
                "filesystem.list",
                "filesystem.read",
                "filesystem.write",
                "shell.exec",
            ],
            "linux",
            &["HOME"],
            &[("gh", false), ("jq", true)],
        ),
        host(
            "laptop",
            "execution",
            &[
                "filesystem.list",
                "filesystem.read",
                "filesystem.write",
                "shell.exec",
            ],
            "darwin",
            &["GITHUB_TOKEN"],
            &[("gh", true)],
        ),
        host(
            "cam",
            "specialized",
            &["filesystem.read"],
            "linux",
            &[],
            &[],
        ),
    ]
}

fn file(dir: &str, source: SkillSource, content: &str) -> SkillFile {
    SkillFile {
        dir: dir.into(),
        source,
        content: content.into(),
    }
}

fn requires(yaml: &str) -> String {
    format!("---\ndescription: d\nmetadata:\n  gsv:\n    requires:\n{yaml}---\n")
}

/// (eligible, hosts, reasons).
type Verdict = (bool, Vec<String>, Vec<String>);

/// The verdict for one skill with these requirements.
fn verdict(
    req_yaml: &str,
    hosts: &[HostInfo],
    config: &Config,
) -> (bool, Vec<String>, Vec<String>) {
    let st = skills_status(
        "main",
        &[file("s", SkillSource::Global, &requires(req_yaml))],
        hosts,
        config,
        0,
    );
    let s = &st.skills[0];
    (s.eligible, s.eligible_hosts.clone(), s.reasons.clone())
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn status_shape_precedence_and_errors() {
    let files = [
        file("tmux", SkillSource::Global, "---\nname: tmux\ndescription: Drive tmux.\nmetadata: '{\"openclaw\": {\"emoji\": \"🧵\", \"requires\": {\"bins\": [\"tmux\"], \"anyBins\": [\"bad name\"]}}}'\n---\n"),
        file("github", SkillSource::Global, "---\ndescription: Global GitHub.\n---\n"),
        file("broken", SkillSource::Global, "---\nname: [x\n---\n"),
        file("github", SkillSource::Agent, "---\nname: github\nhomepage: https://cli.github.com\nmetadata:\n  gsv:\n    requires:\n      bins: [gh]\n      env: [GITHUB_TOKEN]\n---\n# GitHub\n"),
    ];
    let st = skills_status("main", &files, &hosts(), &Config::default(), 42);
    assert_eq!(
        serde_json::to_value(&st).unwrap(),
        json!({
            "agentId": "main",
            "refreshedAt": 42,
            "requiredBins": ["gh", "tmux"],
            "nodes": [
                {"nodeId": "cam", "hostRole": "specialized", "hostCapabilities": ["filesystem.read"], "hostOs": "linux", "hostEnv": [], "hostBins": [], "hostBinStatusUpdatedAt": 1000, "canProbeBins": false},
                {"nodeId": "laptop", "hostRole": "execution", "hostCapabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"], "hostOs": "darwin", "hostEnv": ["GITHUB_TOKEN"], "hostBins": ["gh"], "hostBinStatusUpdatedAt": 1000, "canProbeBins": true},
                {"nodeId": "server", "hostRole": "execution", "hostCapabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"], "hostOs": "linux", "hostEnv": ["HOME"], "hostBins": ["jq"], "hostBinStatusUpdatedAt": 1000, "canProbeBins": true}
            ],
            "skills": [
                {
                    "name": "github", "description": "", "location": "agents/main/skills/github/SKILL.md",
                    "readPath": "skills/github/SKILL.md", "source": "agent", "always": false, "eligible": true,
                    "eligibleHosts": ["laptop"], "reasons": [],
                    "requirements": {"bins": ["gh"], "anyBins": [], "env": ["GITHUB_TOKEN"], "config": [], "os": [], "hostRoles": [], "capabilities": [], "anyCapabilities": []},
                    "homepage": "https://cli.github.com"
                },
                {
                    "name": "broken", "description": "", "location": "skills/broken/SKILL.md",
                    "readPath": "skills/broken/SKILL.md", "source": "global", "always": false, "eligible": false,
                    "eligibleHosts": [],
                    "reasons": ["skills/broken/SKILL.md: invalid YAML in frontmatter at line 3 column 1: while parsing a flow sequence, expected ',' or ']'"],
                    "requirements": {"bins": [], "anyBins": [], "env": [], "config": [], "os": [], "hostRoles": [], "capabilities": [], "anyCapabilities": []},
                    "error": "skills/broken/SKILL.md: invalid YAML in frontmatter at line 3 column 1: while parsing a flow sequence, expected ',' or ']'"
                },
                {
                    "name": "tmux", "description": "Drive tmux.", "location": "skills/tmux/SKILL.md",
                    "readPath": "skills/tmux/SKILL.md", "source": "global", "always": false, "eligible": false,
                    "eligibleHosts": [],
                    "reasons": ["no connected host satisfies requires.bins (has every binary: tmux); hosts checked: cam, laptop, server"],
                    "requirements": {"bins": ["tmux"], "anyBins": ["bad name"], "env": [], "config": [], "os": [], "hostRoles": [], "capabilities": [], "anyCapabilities": []},
                    "emoji": "🧵"
                }
            ]
        })
    );
    assert_eq!(
        st.prompt_skills(),
        vec![PromptSkill {
            name: "github".into(),
            description: "".into(),
            location: "agents/main/skills/github/SKILL.md".into(),
            read_path: "skills/github/SKILL.md".into(),
            always: false,
        }]
    );
    assert_eq!(st.ineligible_count(), 2);
}

#[test]
fn each_host_filter() {
    let c = Config::default();
    let h = hosts();
    let cases: [(&str, Verdict); 9] = [
        ("      hostRoles: [specialized]\n", (true, strings(&["cam"]), vec![])),
        ("      capabilities: [shell.exec, filesystem.write]\n", (true, strings(&["laptop", "server"]), vec![])),
        ("      anyCapabilities: [filesystem.edit, filesystem.read]\n", (true, strings(&["cam", "laptop", "server"]), vec![])),
        ("      os: [Darwin]\n", (true, strings(&["laptop"]), vec![])),
        ("      env: [HOME]\n", (true, strings(&["server"]), vec![])),
        ("      bins: [gh]\n", (true, strings(&["laptop"]), vec![])),
        ("      anyBins: [jq, gh]\n", (true, strings(&["laptop", "server"]), vec![])),
        (
            "      hostRoles: [execution]\n      os: [linux]\n      bins: [gh]\n",
            (false, vec![], strings(&["no connected host satisfies requires.bins (has every binary: gh); hosts checked: server"])),
        ),
        (
            "      hostRoles: [specialized]\n      capabilities: [shell.exec]\n",
            (false, vec![], strings(&["no connected host satisfies requires.capabilities (has every capability: shell.exec); hosts checked: cam"])),
        ),
    ];
    for (yaml, want) in cases {
        assert_eq!(verdict(yaml, &h, &c), want, "{yaml}");
    }
}

#[test]
fn no_hosts_and_config_requirements() {
    let mut c = Config::default();
    assert_eq!(
        verdict("      bins: [gh]\n", &[], &c),
        (
            false,
            vec![],
            strings(&["no node is connected, and this skill needs a host"])
        )
    );
    assert_eq!(
        verdict("      config: [channels.discord.botToken]\n", &[], &c),
        (
            false,
            vec![],
            strings(&[
                "requires.config: `channels.discord.botToken` is not set in the gateway config"
            ])
        )
    );
    c.set("channels.discord.allowFrom", json!(["*"])).unwrap();
    // Config-only requirements need no host.
    assert_eq!(
        verdict("      config: [channels.discord.allowFrom]\n", &[], &c),
        (true, vec![], vec![])
    );
    // No requirements at all: every host.
    assert_eq!(
        verdict("      {}\n", &hosts(), &c),
        (true, strings(&["cam", "laptop", "server"]), vec![])
    );
}

#[test]
fn invalid_requirements_fail_closed_unless_always() {
    let c = Config::default();
    let h = hosts();
    assert_eq!(
        verdict("      capabilities: [gpu]\n      bin: [x]\n      env: [1]\n", &h, &c),
        (
            false,
            vec![],
            strings(&[
                "requires.bin is not a known requirement (known: hostRoles, capabilities, anyCapabilities, os, env, bins, anyBins, config)",
                "requires.capabilities: unknown id `gpu` (known: filesystem.list, filesystem.read, filesystem.write, filesystem.edit, text.search, shell.exec)",
                "requires.env has an entry that is not a name: 1",
            ])
        )
    );
    let always =
        "---\nalways: true\nmetadata:\n  gsv:\n    requires:\n      hostRoles: [robot]\n---\n";
    let st = skills_status("main", &[file("a", SkillSource::Global, always)], &h, &c, 0);
    assert_eq!(
        (
            st.skills[0].eligible,
            st.skills[0].eligible_hosts.clone(),
            st.skills[0].reasons.clone()
        ),
        (true, strings(&["cam", "laptop", "server"]), vec![])
    );
    assert_eq!(st.required_bins, Vec::<String>::new());
}

#[test]
fn config_entries_override_by_name_dir_or_location() {
    let files = [
        file(
            "gh-dir",
            SkillSource::Global,
            &format!(
                "---\nname: github\n{}",
                &requires("      bins: [gh]\n      os: [windows]\n")[4..]
            ),
        ),
        file(
            "tmux",
            SkillSource::Global,
            &requires("      bins: [tmux]\n"),
        ),
        file(
            "notes",
            SkillSource::Global,
            "---\ndescription: Notes.\n---\n",
        ),
        file(
            "odd",
            SkillSource::Global,
            "---\nname: oddity\ndescription: Odd.\n---\n",
        ),
    ];
    let mut c = Config::default();
    // A location has dots, so the entries are set as one object.
    c.set(
        "skills.entries",
        json!({
            "github": {"requires": {"os": ["darwin"]}},
            "tmux": {"always": true},
            "skills/notes/SKILL.md": {"enabled": false},
            "odd": {"always": "yes"}
        }),
    )
    .unwrap();
    let st = skills_status("main", &files, &hosts(), &c, 0);
    type Row = (String, bool, bool, Vec<String>, Vec<String>);
    let summary: Vec<Row> = st
        .skills
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                s.eligible,
                s.disabled,
                s.eligible_hosts.clone(),
                s.reasons.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("github".into(), true, false, strings(&["laptop"]), vec![]),
            (
                "notes".into(),
                false,
                true,
                vec![],
                strings(&[
                    "disabled in the config (skills.entries.skills/notes/SKILL.md.enabled = false)"
                ])
            ),
            (
                "oddity".into(),
                false,
                false,
                vec![],
                strings(&["skills.entries.odd.always must be true or false"])
            ),
            (
                "tmux".into(),
                true,
                false,
                strings(&["cam", "laptop", "server"]),
                vec![]
            ),
        ]
    );
    // The override replaced `os` and kept `bins`.
    assert_eq!(st.skills[0].requirements.os, strings(&["darwin"]));
    assert_eq!(st.skills[0].requirements.bins, strings(&["gh"]));
    assert_eq!(st.required_bins, strings(&["gh"]));
    assert_eq!(st.ineligible_count(), 1);
}

#[test]
fn host_info_reads_the_wire_shape() {
    let h: HostInfo = serde_json::from_value(json!({
        "nodeId": "n1", "hostRole": "execution", "hostCapabilities": ["shell.exec"],
        "hostOs": "linux", "hostEnv": ["HOME"], "hostBinStatus": {"git": true, "gh": false},
        "toolCapabilities": {"Bash": ["shell.exec"]}
    }))
    .unwrap();
    assert_eq!(
        h,
        host(
            "n1",
            "execution",
            &["shell.exec"],
            "linux",
            &["HOME"],
            &[("git", true), ("gh", false)]
        )
        .clone_without_probe_time()
    );
    assert_eq!(h.available_bins(), strings(&["git"]));
    assert_eq!(
        primary_execution_host(&hosts()).map(|h| h.node_id.as_str()),
        Some("laptop")
    );
}

impl HostInfo {
    fn clone_without_probe_time(mut self) -> Self {
        self.host_bin_status_updated_at = None;
        self
    }
}

proptest::proptest! {
    /// Whatever a SKILL.md holds, reading it never panics.
    #[test]
    fn any_skill_md_is_read_without_panic(body in "(---\n)?[ -~\n\t:\\[\\]{}&*!|>'\"#-]{0,200}(\n---\n)?.{0,40}") {
        let files = [file("x", SkillSource::Agent, &body)];
        let st = skills_status("main", &files, &hosts(), &Config::default(), 0);
        proptest::prop_assert_eq!(st.skills.len(), 1);
    }
}
