//! `memory.*` from clients: the gateway's owner reads and writes the
//! account's long-term memory through its index object (`memory_do`),
//! every person's and agent's space of it.

use super::Gateway;
use crate::memory::calls::*;
use crate::memory::settings::MemorySettings;
use crate::worker::bindings::MemoryStub;
use crate::worker::rpc::now_ms;
use gsv_protocol::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// The agent a memory call is about when none is named.
const DEFAULT_AGENT: &str = "main";

impl Gateway {
    fn memory_caller(
        &self,
        agent_id: Option<&str>,
        user: Option<&str>,
    ) -> (MemorySettings, Caller) {
        let settings = MemorySettings::from_config(&self.config.borrow());
        let caller = Caller {
            account: settings.account.clone(),
            agent_id: agent_id.unwrap_or(DEFAULT_AGENT).to_string(),
            user: user.map(str::to_string),
            operator: true,
            settings: settings.index.clone(),
        };
        (settings, caller)
    }

    pub(super) async fn memory_search(
        &self,
        params: MemorySearchParams,
    ) -> Res<MemorySearchResult> {
        let (s, caller) = self.memory_caller(params.agent_id.as_deref(), params.user.as_deref());
        let started = now_ms();
        let mut result = MemoryStub::for_account(&self.env, &s.account)
            .call(&IndexSearch { caller, params })
            .await?;
        result.took_ms = (now_ms() - started) as f64;
        Ok(result)
    }

    pub(super) async fn memory_get(&self, params: MemoryGetParams) -> Res<MemoryGetResult> {
        let (s, caller) = self.memory_caller(None, None);
        MemoryStub::for_account(&self.env, &s.account)
            .call(&IndexGet { caller, params })
            .await
    }

    pub(super) async fn memory_put(&self, params: MemoryPutParams) -> Res<MemoryPutResult> {
        let user = params.user.clone().or_else(|| Some(OWNER.to_string()));
        let (s, caller) = self.memory_caller(params.agent_id.as_deref(), user.as_deref());
        MemoryStub::for_account(&self.env, &s.account)
            .call(&IndexWrite { caller, params })
            .await
    }

    pub(super) async fn memory_delete(
        &self,
        params: MemoryDeleteParams,
    ) -> Res<MemoryDeleteResult> {
        let (s, caller) = self.memory_caller(None, None);
        MemoryStub::for_account(&self.env, &s.account)
            .call(&IndexDelete {
                caller,
                uri: params.uri,
            })
            .await
    }

    pub(super) async fn memory_status(&self) -> Res<MemoryStatusResult> {
        let (s, caller) = self.memory_caller(None, None);
        MemoryStub::for_account(&self.env, &s.account)
            .call(&IndexStatus { caller })
            .await
    }

    pub(super) async fn memory_repair(&self) -> Res<MemoryRepairResult> {
        let (s, caller) = self.memory_caller(None, None);
        MemoryStub::for_account(&self.env, &s.account)
            .call(&IndexRepair { caller })
            .await
    }
}

/// The person a memory is about when the gateway's owner writes one
/// without naming anybody: the owner (the same id the CLI's and web
/// UI's sessions recall under).
use crate::memory::calls::OWNER;
