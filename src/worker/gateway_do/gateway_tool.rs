//! The agent's tools the Gateway runs for a Session (`crate::agent_tools`):
//! `gsv__ConfigGet` answered at once, masked like `config.get`;
//! `gsv__LogsGet` answered when the node does (`node_registry/logs.rs`);
//! `gsv__SessionSend` answered at once or when the other session's run
//! ends (`scheduler/session_send.rs`).

use super::node_registry::LogsAsker;
use super::{to_value, Gateway};
use crate::agent_tools::{GatewayTool, GatewayToolCall, GatewayToolReply};
use gsv_protocol::{ConfigGetParams, ErrorShape};

type Res<T> = std::result::Result<T, ErrorShape>;

impl Gateway {
    pub(super) async fn gateway_tool(&self, call: GatewayToolCall) -> Res<GatewayToolReply> {
        match &call.tool {
            GatewayTool::ConfigGet { path } => {
                let p = ConfigGetParams { path: path.clone() };
                Ok(GatewayToolReply::Done {
                    result: to_value(&self.config_get(p)?)?,
                })
            }
            GatewayTool::LogsGet { node_id, lines } => {
                let asker = LogsAsker::Session {
                    key: &call.session_key,
                    tool_call_id: &call.call_id,
                };
                self.ask_logs(node_id.as_deref(), *lines, asker).await?;
                Ok(GatewayToolReply::Pending)
            }
            GatewayTool::SessionSend { .. } => self.session_send(&call).await,
        }
    }
}
