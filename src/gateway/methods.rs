//! The methods and events this gateway implements, and which connection
//! modes may call each method (v1 had no per-mode checks; see reference §12 #9).

use gsv_protocol::{codes, event, method, ClientMode, ErrorShape};

/// Who may call a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Callers {
    /// Operators and chat clients only.
    Clients,
    /// Clients and channel workers (they relay user messages).
    ClientsAndChannels,
    /// Nodes only: they answer the calls sent to them.
    Nodes,
    /// Clients and nodes (v1 nodes use `tools.list` as a keepalive).
    ClientsAndNodes,
}

const METHODS: &[(&str, Callers)] = &[
    (method::CHAT_SEND, Callers::ClientsAndChannels),
    (method::CONFIG_GET, Callers::Clients),
    (method::CONFIG_SET, Callers::Clients),
    (method::SESSION_GET, Callers::ClientsAndChannels),
    (method::SESSION_PREVIEW, Callers::ClientsAndChannels),
    (method::SESSIONS_LIST, Callers::Clients),
    (method::SESSION_STATS, Callers::ClientsAndChannels),
    (method::SESSION_HISTORY, Callers::ClientsAndChannels),
    (method::SESSION_PATCH, Callers::Clients),
    (method::SESSION_COMPACT, Callers::Clients),
    (method::SESSION_RESET, Callers::Clients),
    (method::SESSION_TRANSCRIPT, Callers::Clients),
    (method::SKILLS_STATUS, Callers::Clients),
    (method::SKILLS_UPDATE, Callers::Clients),
    (method::WORKSPACE_LIST, Callers::Clients),
    (method::WORKSPACE_READ, Callers::Clients),
    (method::WORKSPACE_WRITE, Callers::Clients),
    (method::WORKSPACE_DELETE, Callers::Clients),
    (method::CHAT_ABORT, Callers::ClientsAndChannels),
    (method::TOOLS_LIST, Callers::ClientsAndNodes),
    (method::TOOL_INVOKE, Callers::Clients),
    (method::TOOL_RESULT, Callers::Nodes),
    (method::NODE_EXEC_EVENT, Callers::Nodes),
    (method::NODE_PROBE_RESULT, Callers::Nodes),
    (method::TRANSFER_STATUS, Callers::Nodes),
];

const EVENTS: &[&str] = &[
    event::CHAT,
    event::TOOL_INVOKE,
    event::NODE_PROBE,
    event::TRANSFER_SEND,
    event::TRANSFER_RECEIVE,
    event::TRANSFER_END,
    event::TRANSFER_CANCEL,
];

/// Every method `hello-ok` advertises: exactly those handled, `connect` included.
pub fn advertised_methods() -> Vec<String> {
    std::iter::once(method::CONNECT)
        .chain(METHODS.iter().map(|(m, _)| *m))
        .map(String::from)
        .collect()
}

pub fn advertised_events() -> Vec<String> {
    EVENTS.iter().map(|e| e.to_string()).collect()
}

/// Checks that a connection in `mode` may call `name`.
pub fn authorize(mode: ClientMode, name: &str) -> Result<(), ErrorShape> {
    let Some((_, callers)) = METHODS.iter().find(|(m, _)| *m == name) else {
        if name == method::CONNECT {
            return Err(ErrorShape::new(codes::BAD_REQUEST, "Already connected"));
        }
        return Err(ErrorShape::new(
            codes::NOT_FOUND,
            format!("Unknown method: {name}"),
        ));
    };
    let allowed = match callers {
        Callers::Clients => mode == ClientMode::Client,
        Callers::ClientsAndChannels => matches!(mode, ClientMode::Client | ClientMode::Channel),
        Callers::Nodes => mode == ClientMode::Node,
        Callers::ClientsAndNodes => matches!(mode, ClientMode::Client | ClientMode::Node),
    };
    if allowed {
        Ok(())
    } else {
        let mode = serde_json::to_value(mode).unwrap();
        Err(ErrorShape::new(
            codes::FORBIDDEN,
            format!(
                "Method {name} is not allowed for {} connections",
                mode.as_str().unwrap_or("?")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_lists_exactly_the_handled_methods() {
        assert_eq!(
            advertised_methods(),
            [
                "connect",
                "chat.send",
                "config.get",
                "config.set",
                "session.get",
                "session.preview",
                "sessions.list",
                "session.stats",
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
                "chat.abort",
                "tools.list",
                "tool.invoke",
                "tool.result",
                "node.exec.event",
                "node.probe.result",
                "transfer.status"
            ]
        );
        assert_eq!(
            advertised_events(),
            [
                "chat",
                "tool.invoke",
                "node.probe",
                "transfer.send",
                "transfer.receive",
                "transfer.end",
                "transfer.cancel"
            ]
        );
    }

    #[test]
    fn per_mode_authorization() {
        assert_eq!(authorize(ClientMode::Client, "config.set"), Ok(()));
        assert_eq!(
            authorize(ClientMode::Node, "config.set"),
            Err(ErrorShape::new(
                403,
                "Method config.set is not allowed for node connections"
            ))
        );
        assert_eq!(
            authorize(ClientMode::Channel, "config.get"),
            Err(ErrorShape::new(
                403,
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
                403,
                "Method node.probe.result is not allowed for client connections"
            ))
        );
        assert_eq!(
            authorize(ClientMode::Node, "skills.update"),
            Err(ErrorShape::new(
                403,
                "Method skills.update is not allowed for node connections"
            ))
        );
        assert_eq!(
            authorize(ClientMode::Client, "tool.result"),
            Err(ErrorShape::new(
                403,
                "Method tool.result is not allowed for client connections"
            ))
        );
        assert_eq!(
            authorize(ClientMode::Node, "tool.invoke"),
            Err(ErrorShape::new(
                403,
                "Method tool.invoke is not allowed for node connections"
            ))
        );
        assert_eq!(
            authorize(ClientMode::Client, "nope.nope"),
            Err(ErrorShape::new(404, "Unknown method: nope.nope"))
        );
        assert_eq!(
            authorize(ClientMode::Client, "connect"),
            Err(ErrorShape::new(400, "Already connected"))
        );
    }
}
