use super::*;
use serde_json::json;

#[test]
fn hello_lists_exactly_the_handled_methods() {
    assert_eq!(
        advertised_methods(),
        [
            "connect",
            "chat.send",
            "config.get",
            "config.set",
            "model.check",
            "session.get",
            "session.preview",
            "sessions.list",
            "session.stats",
            "usage.daily",
            "session.history",
            "session.patch",
            "session.compact",
            "session.reset",
            "session.transcript",
            "skills.status",
            "skills.update",
            "workspace.list",
            "workspace.read",
            "workspace.write",
            "workspace.delete",
            "workspace.refresh",
            "chat.abort",
            "tools.list",
            "tool.invoke",
            "tool.result",
            "tool.request",
            "logs.get",
            "logs.result",
            "node.exec.event",
            "node.probe.result",
            "transfer.status",
            "channels.list",
            "channel.inbound",
            "channel.start",
            "channel.stop",
            "channel.status",
            "channel.login",
            "channel.logout",
            "pair.list",
            "pair.approve",
            "pair.reject",
            "cron.status",
            "cron.list",
            "cron.add",
            "cron.update",
            "cron.remove",
            "cron.run",
            "cron.runs",
            "heartbeat.status",
            "heartbeat.start",
            "heartbeat.trigger",
            "memory.search",
            "memory.get",
            "memory.put",
            "memory.delete",
            "memory.status",
            "memory.repair",
            "trust.explain",
            "audit.list",
            "approvals.list",
            "approvals.decide"
        ]
    );
    assert_eq!(
        advertised_events(),
        [
            "chat",
            "tool.invoke",
            "logs.get",
            "node.probe",
            "transfer.send",
            "transfer.receive",
            "transfer.end",
            "transfer.cancel",
            "channel.outbound",
            "channel.typing"
        ]
    );
}

#[test]
fn per_mode_authorization() {
    assert_eq!(authorize(ClientMode::Channel, "channel.inbound"), Ok(()));
    assert_eq!(
        authorize(ClientMode::Client, "channel.inbound"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method channel.inbound is not allowed for client connections"
        ))
    );
    assert_eq!(
        authorize(ClientMode::Channel, "pair.approve"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method pair.approve is not allowed for channel connections"
        ))
    );
    assert_eq!(authorize(ClientMode::Client, "config.set"), Ok(()));
    assert_eq!(
        authorize(ClientMode::Node, "config.set"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method config.set is not allowed for node connections"
        ))
    );
    assert_eq!(
        authorize(ClientMode::Channel, "config.get"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method config.get is not allowed for channel connections"
        ))
    );
    assert_eq!(authorize(ClientMode::Channel, "chat.send"), Ok(()));
    assert_eq!(authorize(ClientMode::Node, "tool.result"), Ok(()));
    assert_eq!(authorize(ClientMode::Node, "tools.list"), Ok(()));
    assert_eq!(authorize(ClientMode::Node, "node.probe.result"), Ok(()));
    assert_eq!(authorize(ClientMode::Client, "skills.update"), Ok(()));
    assert_eq!(
        authorize(ClientMode::Client, "node.probe.result"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method node.probe.result is not allowed for client connections"
        ))
    );
    assert_eq!(
        authorize(ClientMode::Node, "skills.update"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method skills.update is not allowed for node connections"
        ))
    );
    assert_eq!(
        authorize(ClientMode::Client, "tool.result"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method tool.result is not allowed for client connections"
        ))
    );
    assert_eq!(
        authorize(ClientMode::Node, "tool.invoke"),
        Err(ErrorShape::new(
            crate::codes::FORBIDDEN,
            "Method tool.invoke is not allowed for node connections"
        ))
    );
    // The node calls and their answers: clients ask, nodes answer.
    for (mode, method, allowed) in [
        (ClientMode::Client, "tool.request", true),
        (ClientMode::Node, "tool.request", false),
        (ClientMode::Channel, "tool.request", false),
        (ClientMode::Client, "logs.get", true),
        (ClientMode::Node, "logs.get", false),
        (ClientMode::Channel, "logs.get", false),
        (ClientMode::Node, "logs.result", true),
        (ClientMode::Client, "logs.result", false),
        (ClientMode::Channel, "logs.result", false),
    ] {
        assert_eq!(
            authorize(mode, method).is_ok(),
            allowed,
            "{mode:?} {method}"
        );
    }
    assert_eq!(
        authorize(ClientMode::Client, "nope.nope"),
        Err(ErrorShape::new(
            crate::codes::NOT_FOUND,
            "Unknown method: nope.nope"
        ))
    );
    assert_eq!(
        authorize(ClientMode::Client, "connect"),
        Err(ErrorShape::new(
            crate::codes::BAD_REQUEST,
            "Already connected"
        ))
    );
}

#[test]
fn requests_parse_into_their_params() {
    assert_eq!(
        ClientRequest::parse(
            "chat.send",
            Some(json!({"sessionKey": "main", "message": "hi"}))
        ),
        Ok(ClientRequest::ChatSend(ChatSendParams {
            session_key: "main".into(),
            message: "hi".into(),
            run_id: None,
            media: vec![],
        }))
    );
    // Absent params read as `{}`.
    assert_eq!(
        ClientRequest::parse("config.get", None),
        Ok(ClientRequest::ConfigGet(ConfigGetParams { path: None }))
    );
    // A method without params takes whatever comes, as before.
    for params in [
        None,
        Some(json!({})),
        Some(json!({"x": 1})),
        Some(json!(null)),
    ] {
        assert_eq!(
            ClientRequest::parse("tools.list", params),
            Ok(ClientRequest::ToolsList(NoParams))
        );
    }
    assert_eq!(
        ClientRequest::parse("nope.nope", None),
        Err(ErrorShape::new(
            crate::codes::NOT_FOUND,
            "Unknown method: nope.nope"
        ))
    );
    assert_eq!(
        ClientRequest::parse("session.get", Some(json!({"sessionKey": 7}))),
        Err(ErrorShape::new(
            crate::codes::BAD_REQUEST,
            "Invalid params for session.get: invalid type: integer `7`, expected a string"
        ))
    );
    assert_eq!(
        ClientRequest::parse("session.get", None),
        Err(ErrorShape::new(
            crate::codes::BAD_REQUEST,
            "Invalid params for session.get: missing field `sessionKey`"
        ))
    );
    let every = METHODS.iter().map(|m| m.name);
    for name in every {
        // Each listed name parses to the variant that names it back.
        if let Ok(req) = ClientRequest::parse(name, Some(json!({}))) {
            assert_eq!(req.method(), name);
        }
    }
    assert_eq!(method::ChatSend::NAME, "chat.send");
    assert_eq!(method::ToolResult::CALLERS, Callers::Nodes);
}

#[test]
fn no_params_are_sent_as_none() {
    assert_eq!(serde_json::to_value(NoParams).unwrap(), Value::Null);
}

#[test]
fn results_keep_their_v1_shapes() {
    let started = ChatSendResult::Started(ChatStartedResult {
        run_id: "r1".into(),
        session_key: Some("agent:main:main".into()),
        queued: true,
        queue_position: Some(1),
        directives: None,
    });
    let wire = json!({"status": "started", "runId": "r1", "sessionKey": "agent:main:main",
        "queued": true, "queuePosition": 1});
    assert_eq!(serde_json::to_value(&started).unwrap(), wire);
    assert_eq!(
        serde_json::from_value::<ChatSendResult>(wire).unwrap(),
        started
    );
    // A v1 gateway's answer: no session key, nothing said of a queue.
    assert_eq!(
        serde_json::from_value::<ChatSendResult>(json!({"status": "started", "runId": "r2"}))
            .unwrap(),
        ChatSendResult::Started(ChatStartedResult {
            run_id: "r2".into(),
            session_key: None,
            queued: false,
            queue_position: None,
            directives: None,
        })
    );
    let command = ChatSendResult::Command(ChatCommandResult {
        command: "status".into(),
        session_key: "s".into(),
        response: Some("ok".into()),
        error: None,
        run_id: None,
    });
    assert_eq!(
        serde_json::to_value(&command).unwrap(),
        json!({"status": "command", "command": "status", "sessionKey": "s", "response": "ok"})
    );
    let directive = ChatSendResult::DirectiveOnly(ChatDirectiveOnlyResult {
        session_key: "s".into(),
        response: None,
        directives: ChatDirectives::default(),
    });
    assert_eq!(
        serde_json::to_value(&directive).unwrap(),
        json!({"status": "directive-only", "sessionKey": "s", "directives": {}})
    );
    let hello = HelloOkResult {
        kind: HelloOkTag::HelloOk,
        protocol: 1,
        server: ServerInfo {
            version: "0.1.0".into(),
            connection_id: "c".into(),
        },
        features: Features {
            methods: vec!["connect".into()],
            events: vec![],
        },
    };
    let wire = json!({"type": "hello-ok", "protocol": 1,
        "server": {"version": "0.1.0", "connectionId": "c"},
        "features": {"methods": ["connect"], "events": []}});
    assert_eq!(serde_json::to_value(&hello).unwrap(), wire);
    let mut other = wire;
    other["type"] = json!("hello-not");
    assert!(serde_json::from_value::<HelloOkResult>(other).is_err());
    assert_eq!(
        serde_json::to_value(SessionPatchResult { ok: true }).unwrap(),
        json!({"ok": true})
    );
}
