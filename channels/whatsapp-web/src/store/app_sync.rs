//! `AppSyncStore`: app-state sync keys, each collection's hash state and
//! its mutation MACs.
//!
//! A `HashState` is a row of `wa_app_state_versions` plus its
//! `index_value_map` in `wa_app_state_index_values` (wacore never fills
//! that map today, so writing a version costs one row and an empty delete).
//! "The most recently stored" sync key is the one with the highest `seq`,
//! which every `set_sync_key` advances, as `InMemoryBackend` remembers the
//! last key set.

use std::collections::HashMap;

use async_trait::async_trait;
use wacore::appstate::hash::HashState;
use wacore::appstate::processor::AppStateMutationMAC;
use wacore::store::error::Result;
use wacore::store::traits::{AppStateSyncKey, AppSyncStore};

use super::sql::Sql;
use super::{int_u64, list, tuples, SqlBackend};

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl<S: Sql + Send + Sync> AppSyncStore for SqlBackend<S> {
    async fn get_sync_key(&self, key_id: &[u8]) -> Result<Option<AppStateSyncKey>> {
        self.first(
            "SELECT key_data, fingerprint, timestamp FROM wa_app_state_sync_keys WHERE key_id = ?1",
            &[key_id.into()],
        )?
        .map(|row| {
            Ok(AppStateSyncKey {
                key_data: row.blob(0)?,
                fingerprint: row.blob(1)?,
                timestamp: row.int(2)?,
            })
        })
        .transpose()
    }

    async fn set_sync_key(&self, key_id: &[u8], key: AppStateSyncKey) -> Result<()> {
        self.exec(
            "INSERT INTO wa_app_state_sync_keys (key_id, key_data, fingerprint, timestamp, seq)
             VALUES (?1, ?2, ?3, ?4, (SELECT IFNULL(MAX(seq), 0) + 1 FROM wa_app_state_sync_keys))
             ON CONFLICT (key_id) DO UPDATE SET key_data = excluded.key_data,
               fingerprint = excluded.fingerprint, timestamp = excluded.timestamp, seq = excluded.seq",
            &[
                key_id.into(),
                key.key_data.into(),
                key.fingerprint.into(),
                key.timestamp.into(),
            ],
        )
    }

    async fn get_version(&self, name: &str) -> Result<HashState> {
        let Some(row) = self.first(
            "SELECT version, hash, mac_mismatch_fatal FROM wa_app_state_versions WHERE name = ?1",
            &[name.into()],
        )?
        else {
            return Ok(HashState::default());
        };
        let mut index_value_map = HashMap::new();
        for entry in self.rows(
            "SELECT index_key, value FROM wa_app_state_index_values WHERE name = ?1",
            &[name.into()],
        )? {
            index_value_map.insert(entry.text(0)?, entry.blob(1)?);
        }
        Ok(HashState {
            version: row.u64(0)?,
            hash: row.array(1)?,
            index_value_map,
            mac_mismatch_fatal: row.bool(2)?,
        })
    }

    async fn set_version(&self, name: &str, state: HashState) -> Result<()> {
        self.exec(
            "INSERT INTO wa_app_state_versions (name, version, hash, mac_mismatch_fatal)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (name) DO UPDATE SET version = excluded.version, hash = excluded.hash,
               mac_mismatch_fatal = excluded.mac_mismatch_fatal",
            &[
                name.into(),
                int_u64("hash state version", state.version)?,
                state.hash.as_slice().into(),
                state.mac_mismatch_fatal.into(),
            ],
        )?;
        self.exec(
            "DELETE FROM wa_app_state_index_values WHERE name = ?1",
            &[name.into()],
        )?;
        let entries: Vec<(&String, &Vec<u8>)> = state.index_value_map.iter().collect();
        self.chunked(
            &[name.into()],
            &entries,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_app_state_index_values (name, index_key, value) VALUES {}",
                    tuples(1, n, 2)
                )
            },
            |(key, value), p| {
                p.extend([key.as_str().into(), value.as_slice().into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn put_mutation_macs(
        &self,
        name: &str,
        version: u64,
        mutations: &[AppStateMutationMAC],
    ) -> Result<()> {
        self.chunked(
            &[name.into(), int_u64("mutation version", version)?],
            mutations,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_app_state_mutation_macs (name, version, index_mac, value_mac)
                     VALUES {}
                     ON CONFLICT (name, index_mac) DO UPDATE SET version = excluded.version,
                       value_mac = excluded.value_mac",
                    tuples(2, n, 2)
                )
            },
            |m, p| {
                p.extend([m.index_mac.as_slice().into(), m.value_mac.as_slice().into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn get_mutation_mac(&self, name: &str, index_mac: &[u8]) -> Result<Option<Vec<u8>>> {
        self.first(
            "SELECT value_mac FROM wa_app_state_mutation_macs WHERE name = ?1 AND index_mac = ?2",
            &[name.into(), index_mac.into()],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }

    async fn get_mutation_macs(
        &self,
        name: &str,
        index_macs: &[[u8; 32]],
    ) -> Result<HashMap<[u8; 32], Vec<u8>>> {
        let rows = self.chunked(
            &[name.into()],
            index_macs,
            1,
            |n| {
                format!(
                    "SELECT index_mac, value_mac FROM wa_app_state_mutation_macs
                     WHERE name = ?1 AND index_mac IN ({})",
                    list(1, n)
                )
            },
            |mac, p| {
                p.push(mac.as_slice().into());
                Ok(())
            },
        )?;
        rows.into_iter()
            .map(|row| Ok((row.array(0)?, row.blob(1)?)))
            .collect()
    }

    async fn delete_mutation_macs(&self, name: &str, index_macs: &[Vec<u8>]) -> Result<()> {
        self.chunked(
            &[name.into()],
            index_macs,
            1,
            |n| {
                format!(
                    "DELETE FROM wa_app_state_mutation_macs WHERE name = ?1 AND index_mac IN ({})",
                    list(1, n)
                )
            },
            |mac, p| {
                p.push(mac.as_slice().into());
                Ok(())
            },
        )
        .map(drop)
    }

    async fn clear_mutation_macs(&self, name: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_app_state_mutation_macs WHERE name = ?1",
            &[name.into()],
        )
    }

    async fn get_latest_sync_key_id(&self) -> Result<Option<Vec<u8>>> {
        self.first(
            "SELECT key_id FROM wa_app_state_sync_keys ORDER BY seq DESC LIMIT 1",
            &[],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }
}
