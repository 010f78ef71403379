//! The gateway's configuration: loaded at start, read and written by
//! `config.get` / `config.set`, and the routing derived from it.

use super::{workspace_rpc, Gateway};
use crate::config::Config;
use crate::routing::{canonicalize_session_key, RoutingConfig};
use crate::worker::rpc::internal_error;
use gsv_protocol::*;
use serde::Deserialize;
use serde_json::Value;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

pub(super) fn load_config(sql: &SqlStorage) -> Result<Config> {
    #[derive(Deserialize)]
    struct Row {
        overrides: String,
    }
    let rows: Vec<Row> = sql
        .exec("SELECT overrides FROM config WHERE id = 1", None)?
        .to_array()?;
    Ok(match rows.first() {
        Some(row) => Config::from_overrides(serde_json::from_str(&row.overrides)?),
        None => Config::default(),
    })
}

impl Gateway {
    /// The R2 bucket and the agent a workspace request is about.
    pub(super) fn workspace(&self, agent_id: Option<&str>) -> Res<(Bucket, String)> {
        let bucket = crate::worker::bindings::bucket(&self.env).map_err(internal_error)?;
        Ok((
            bucket,
            workspace_rpc::agent(agent_id, &self.routing.borrow().default_agent_id),
        ))
    }

    pub(super) fn canonical_key(&self, key: &str) -> String {
        canonicalize_session_key(key, &self.routing.borrow())
    }

    pub(super) fn config_get(&self, p: ConfigGetParams) -> Res<ConfigGetResult> {
        let config = self.config.borrow();
        let result = match p.path.filter(|p| !p.is_empty()) {
            Some(path) => {
                let value = config
                    .get_masked(&path)
                    .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.0))?
                    .unwrap_or(Value::Null);
                ConfigGetResult::Path { path, value }
            }
            None => ConfigGetResult::Whole {
                config: config.masked(),
            },
        };
        Ok(result)
    }

    pub(super) fn config_set(&self, p: ConfigSetParams) -> Res<ConfigSetResult> {
        let mut next = self.config.borrow().clone();
        next.set(&p.path, p.value)
            .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.0))?;
        let overrides = serde_json::to_string(next.overrides()).map_err(internal_error)?;
        self.state
            .storage()
            .sql()
            .exec(
                "INSERT INTO config (id, overrides) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET overrides = excluded.overrides",
                vec![overrides.into()],
            )
            .map_err(internal_error)?;
        self.routing.replace(RoutingConfig::from_config(&next));
        self.revisions.config_changed(&next);
        self.config.replace(next);
        Ok(ConfigSetResult {
            ok: true,
            path: p.path,
        })
    }
}
