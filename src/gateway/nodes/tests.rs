use super::*;
use serde_json::json;
use std::collections::BTreeMap;

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: format!("{name} tool"),
        input_schema: json!({"type": "object"}),
    }
}

fn runtime() -> Value {
    json!({
        "hostRole": "execution",
        "hostCapabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"],
        "toolCapabilities": {"Bash": ["shell.exec"], "Read": ["filesystem.read"]},
        "hostOs": "Linux",
        "hostEnv": ["HOME", "PATH"]
    })
}

#[test]
fn accepts_a_well_formed_node() {
    let info = validate_node("laptop", &[tool("Bash"), tool("Read")], Some(&runtime())).unwrap();
    assert_eq!(
        info,
        NodeRuntimeInfo {
            host_role: Some(HostRole::Execution),
            host_capabilities: vec![
                "filesystem.list".into(),
                "filesystem.read".into(),
                "filesystem.write".into(),
                "shell.exec".into()
            ],
            tool_capabilities: BTreeMap::from([
                ("Bash".into(), vec!["shell.exec".into()]),
                ("Read".into(), vec!["filesystem.read".into()]),
            ]),
            host_os: Some("linux".into()),
            host_env: vec!["HOME".into(), "PATH".into()],
            host_bin_status: None,
            host_bin_status_updated_at: None,
        }
    );
    assert_eq!(
        host_info("laptop", &info),
        HostInfo {
            node_id: "laptop".into(),
            host_role: "execution".into(),
            host_capabilities: info.host_capabilities.clone(),
            host_os: Some("linux".into()),
            host_env: vec!["HOME".into(), "PATH".into()],
            host_bin_status: BTreeMap::new(),
            host_bin_status_updated_at: None,
            no_bin_probes: false,
        }
    );
}

#[test]
fn refuses_bad_nodes_saying_why() {
    let tools = [tool("Bash"), tool("Read")];
    let rt = runtime();
    let cases: Vec<(&str, Vec<ToolDefinition>, Option<Value>, &str)> = vec![
        ("a__b", tools.to_vec(), Some(rt.clone()), "Invalid node id \"a__b\": use 1–64 letters, digits, '-', '.' or '_' (no \"__\"; \"gsv\" is reserved)"),
        ("gsv", tools.to_vec(), Some(rt.clone()), "Invalid node id \"gsv\": use 1–64 letters, digits, '-', '.' or '_' (no \"__\"; \"gsv\" is reserved)"),
        ("n", vec![], Some(rt.clone()), "A node must register at least one tool"),
        ("n", vec![tool("Bash"), tool("Bash")], Some(rt.clone()), "Tool \"Bash\" is registered twice"),
        ("n", vec![tool("x__y")], Some(rt.clone()), "Invalid tool name \"x__y\": names must be non-empty and must not contain \"__\""),
        ("n", tools.to_vec(), None, "A node must send nodeRuntime (hostRole, hostCapabilities, toolCapabilities)"),
        ("n", vec![tool("Bash")], Some(rt.clone()), "nodeRuntime.toolCapabilities names \"Read\", which is not a registered tool"),
        ("n", vec![tool("Bash"), tool("Read"), tool("Grep")], Some(rt), "nodeRuntime.toolCapabilities has no entry for tool \"Grep\""),
    ];
    for (id, tools, rt, want) in cases {
        assert_eq!(
            validate_node(id, &tools, rt.as_ref())
                .unwrap_err()
                .to_string(),
            want,
            "{id}"
        );
    }

    let mut unknown_cap = runtime();
    unknown_cap["hostCapabilities"] = json!(["filesystem.list", "teleport"]);
    assert_eq!(
        validate_node("n", &tools, Some(&unknown_cap))
            .unwrap_err()
            .to_string(),
        "nodeRuntime.hostCapabilities: unknown capability \"teleport\" (known: filesystem.list, filesystem.read, filesystem.write, filesystem.edit, text.search, shell.exec)"
    );
    let mut not_declared = runtime();
    not_declared["toolCapabilities"]["Read"] = json!(["text.search"]);
    assert_eq!(
        validate_node("n", &tools, Some(&not_declared))
            .unwrap_err()
            .to_string(),
        "nodeRuntime.toolCapabilities.Read: \"text.search\" is not among hostCapabilities"
    );
    let mut weak = runtime();
    weak["hostCapabilities"] = json!(["filesystem.read", "shell.exec"]);
    weak["toolCapabilities"] = json!({"Bash": ["shell.exec"], "Read": ["filesystem.read"]});
    assert_eq!(
        validate_node("n", &tools, Some(&weak))
            .unwrap_err()
            .to_string(),
        "An execution host must offer filesystem.list, filesystem.read, filesystem.write, shell.exec; missing filesystem.list, filesystem.write"
    );
    weak["hostRole"] = json!("specialized");
    assert!(validate_node("n", &tools, Some(&weak)).is_ok());
    weak["hostRole"] = json!("toaster");
    assert!(validate_node("n", &tools, Some(&weak))
        .unwrap_err()
        .to_string()
        .starts_with("Invalid nodeRuntime: unknown variant `toaster`"));
}

#[test]
fn names_are_namespaced_and_split() {
    assert_eq!(
        namespaced("laptop", &[tool("Bash")]),
        vec![ToolDefinition {
            name: "laptop__Bash".into(),
            description: "Bash tool".into(),
            input_schema: json!({"type": "object"}),
        }]
    );
    assert_eq!(split_tool_name("laptop__Bash"), Some(("laptop", "Bash")));
    assert_eq!(
        split_tool_name("my-box.lan__Grep"),
        Some(("my-box.lan", "Grep"))
    );
    assert_eq!(split_tool_name("Bash"), None);
    assert_eq!(split_tool_name("__Bash"), None);
    assert_eq!(split_tool_name("laptop__"), None);
}

#[test]
fn a_runtime_without_a_host_role_is_read_from_its_capabilities() {
    // The last v1 nodes (6791fd14) send no hostRole and answer no bin
    // probes: an execution host all the same, never probed.
    let mut rt = runtime();
    rt.as_object_mut().unwrap().remove("hostRole");
    let info = validate_node("laptop", &[tool("Bash"), tool("Read")], Some(&rt)).unwrap();
    assert_eq!(info.host_role, None);
    assert_eq!(host_role(&info), HostRole::Execution);
    let host = host_info("laptop", &info);
    assert_eq!(
        (
            host.host_role.as_str(),
            host.no_bin_probes,
            host.can_probe_bins()
        ),
        ("execution", true, false)
    );
    // The role is not stored, so it is read again from the capabilities.
    assert_eq!(serde_json::to_value(&info).unwrap().get("hostRole"), None);
    let reader = json!({
        "hostCapabilities": ["filesystem.read"],
        "toolCapabilities": {"Read": ["filesystem.read"]}
    });
    let info = validate_node("nas", &[tool("Read")], Some(&reader)).unwrap();
    assert_eq!(host_role(&info), HostRole::Specialized);
    // A node that declares its role answers probes when it can run them.
    let declared =
        validate_node("laptop", &[tool("Bash"), tool("Read")], Some(&runtime())).unwrap();
    assert!(host_info("laptop", &declared).can_probe_bins());
}

#[test]
fn a_taken_call_id_is_the_same_sessions_or_refused() {
    use RouteAsker::{Client, Session};
    let a = Session("agent:main:a");
    let b = Session("agent:main:b");
    assert_eq!(id_taken(Some(a), a, true), IdTaken::AlreadyOut);
    assert_eq!(id_taken(Some(a), a, false), IdTaken::Outlived);
    assert_eq!(id_taken(Some(a), b, true), IdTaken::Refused);
    assert_eq!(id_taken(Some(a), b, false), IdTaken::Refused);
    assert_eq!(id_taken(Some(Client), a, true), IdTaken::Refused);
    assert_eq!(id_taken(Some(a), Client, false), IdTaken::Refused);
    assert_eq!(id_taken(Some(Client), Client, false), IdTaken::Refused);
    assert_eq!(id_taken(None, a, true), IdTaken::Outlived);
}

#[test]
fn answered_calls_are_each_sessions_and_the_oldest_go_first() {
    let mut answered = AnsweredCalls::default();
    answered.remember("agent:main:a", "call_0");
    answered.remember("agent:main:a", "call_0");
    assert!(answered.contains("agent:main:a", "call_0"));
    // Another session's call of the same id is its own.
    assert!(!answered.contains("agent:main:b", "call_0"));
    for i in 1..AnsweredCalls::MAX {
        answered.remember("agent:main:b", &format!("call_{i}"));
    }
    assert!(answered.contains("agent:main:a", "call_0"), "256 kept");
    answered.remember("agent:main:b", "one more");
    assert!(
        !answered.contains("agent:main:a", "call_0"),
        "the oldest went"
    );
    assert!(answered.contains("agent:main:b", "call_1"));
    assert!(answered.contains("agent:main:b", "one more"));
}
