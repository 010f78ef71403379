//! `SignalStore`: identities, sessions, pre-keys, signed pre-keys and
//! sender keys, each a BLOB under its address or id.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use wacore::store::error::Result;
use wacore::store::traits::SignalStore;

use super::sql::{Sql, Value};
use super::{list, tuples, SqlBackend};

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl<S: Sql + Send + Sync> SignalStore for SqlBackend<S> {
    async fn put_identity(&self, address: &str, key: [u8; 32]) -> Result<()> {
        self.exec(
            "INSERT INTO wa_identities (address, key) VALUES (?1, ?2)
             ON CONFLICT (address) DO UPDATE SET key = excluded.key",
            &[address.into(), key.as_slice().into()],
        )
    }

    async fn put_identities_batch(&self, identities: &[(Arc<str>, [u8; 32])]) -> Result<()> {
        self.chunked(
            &[],
            identities,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_identities (address, key) VALUES {}
                     ON CONFLICT (address) DO UPDATE SET key = excluded.key",
                    tuples(0, n, 2)
                )
            },
            |(address, key), p| {
                p.extend([(**address).into(), key.as_slice().into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn load_identity(&self, address: &str) -> Result<Option<[u8; 32]>> {
        self.first(
            "SELECT key FROM wa_identities WHERE address = ?1",
            &[address.into()],
        )?
        .map(|row| row.array(0))
        .transpose()
    }

    async fn delete_identity(&self, address: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_identities WHERE address = ?1",
            &[address.into()],
        )
    }

    async fn get_session(&self, address: &str) -> Result<Option<Bytes>> {
        self.first(
            "SELECT record FROM wa_sessions WHERE address = ?1",
            &[address.into()],
        )?
        .map(|row| row.blob(0).map(Bytes::from))
        .transpose()
    }

    async fn put_session(&self, address: &str, session: &[u8]) -> Result<()> {
        self.exec(
            "INSERT INTO wa_sessions (address, record) VALUES (?1, ?2)
             ON CONFLICT (address) DO UPDATE SET record = excluded.record",
            &[address.into(), session.into()],
        )
    }

    async fn put_sessions_batch(&self, sessions: &[(Arc<str>, Bytes)]) -> Result<()> {
        self.chunked(
            &[],
            sessions,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_sessions (address, record) VALUES {}
                     ON CONFLICT (address) DO UPDATE SET record = excluded.record",
                    tuples(0, n, 2)
                )
            },
            |(address, record), p| {
                p.extend([(**address).into(), record.as_ref().into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn delete_session(&self, address: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_sessions WHERE address = ?1",
            &[address.into()],
        )
    }

    async fn has_session(&self, address: &str) -> Result<bool> {
        self.holds(
            "SELECT EXISTS (SELECT 1 FROM wa_sessions WHERE address = ?1)",
            &[address.into()],
        )
    }

    /// An address of `user` is `user@server` or `user:device@server`: it
    /// starts with `user@` or `user:`, i.e. lies in `[user@, userA)` or
    /// `[user:, user;)` (`A` follows `@`, `;` follows `:`), two ranges of
    /// each table's primary key rather than a scan.
    async fn has_signal_state_for_user(&self, user: &str) -> Result<bool> {
        let bounds: [Value; 4] = [
            format!("{user}@").into(),
            format!("{user}A").into(),
            format!("{user}:").into(),
            format!("{user};").into(),
        ];
        self.holds(
            "SELECT EXISTS (SELECT 1 FROM wa_sessions
                            WHERE (address >= ?1 AND address < ?2) OR (address >= ?3 AND address < ?4))
                 OR EXISTS (SELECT 1 FROM wa_identities
                            WHERE (address >= ?1 AND address < ?2) OR (address >= ?3 AND address < ?4))",
            &bounds,
        )
    }

    async fn store_prekey(&self, id: u32, record: &[u8], uploaded: bool) -> Result<()> {
        self.exec(
            "INSERT INTO wa_prekeys (id, record, uploaded) VALUES (?1, ?2, ?3)
             ON CONFLICT (id) DO UPDATE SET record = excluded.record, uploaded = excluded.uploaded",
            &[id.into(), record.into(), uploaded.into()],
        )
    }

    async fn store_prekeys_batch(&self, keys: &[(u32, Bytes)], uploaded: bool) -> Result<()> {
        self.chunked(
            &[uploaded.into()],
            keys,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_prekeys (uploaded, id, record) VALUES {}
                     ON CONFLICT (id) DO UPDATE SET record = excluded.record, uploaded = excluded.uploaded",
                    tuples(1, n, 2)
                )
            },
            |(id, record), p| {
                p.extend([(*id).into(), record.as_ref().into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn load_prekey(&self, id: u32) -> Result<Option<Bytes>> {
        self.first("SELECT record FROM wa_prekeys WHERE id = ?1", &[id.into()])?
            .map(|row| row.blob(0).map(Bytes::from))
            .transpose()
    }

    /// The keys found, in the order asked for.
    async fn load_prekeys_batch(&self, ids: &[u32]) -> Result<Vec<(u32, Bytes)>> {
        let rows = self.chunked(
            &[],
            ids,
            1,
            |n| {
                format!(
                    "SELECT id, record FROM wa_prekeys WHERE id IN ({})",
                    list(0, n)
                )
            },
            |id, p| {
                p.push((*id).into());
                Ok(())
            },
        )?;
        let mut found = HashMap::with_capacity(rows.len());
        for row in rows {
            found.insert(row.u32(0)?, Bytes::from(row.blob(1)?));
        }
        Ok(ids
            .iter()
            .filter_map(|id| found.get(id).map(|record| (*id, record.clone())))
            .collect())
    }

    async fn mark_prekeys_uploaded(&self, ids: &[u32]) -> Result<()> {
        self.chunked(
            &[],
            ids,
            1,
            |n| {
                format!(
                    "UPDATE wa_prekeys SET uploaded = 1 WHERE id IN ({})",
                    list(0, n)
                )
            },
            |id, p| {
                p.push((*id).into());
                Ok(())
            },
        )
        .map(drop)
    }

    async fn remove_prekey(&self, id: u32) -> Result<()> {
        self.exec("DELETE FROM wa_prekeys WHERE id = ?1", &[id.into()])
    }

    async fn get_max_prekey_id(&self) -> Result<u32> {
        match self.first("SELECT IFNULL(MAX(id), 0) FROM wa_prekeys", &[])? {
            Some(row) => row.u32(0),
            None => Ok(0),
        }
    }

    async fn store_signed_prekey(&self, id: u32, record: &[u8]) -> Result<()> {
        self.exec(
            "INSERT INTO wa_signed_prekeys (id, record) VALUES (?1, ?2)
             ON CONFLICT (id) DO UPDATE SET record = excluded.record",
            &[id.into(), record.into()],
        )
    }

    async fn load_signed_prekey(&self, id: u32) -> Result<Option<Vec<u8>>> {
        self.first(
            "SELECT record FROM wa_signed_prekeys WHERE id = ?1",
            &[id.into()],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }

    /// By id.
    async fn load_all_signed_prekeys(&self) -> Result<Vec<(u32, Vec<u8>)>> {
        self.rows("SELECT id, record FROM wa_signed_prekeys ORDER BY id", &[])?
            .into_iter()
            .map(|row| Ok((row.u32(0)?, row.blob(1)?)))
            .collect()
    }

    async fn remove_signed_prekey(&self, id: u32) -> Result<()> {
        self.exec("DELETE FROM wa_signed_prekeys WHERE id = ?1", &[id.into()])
    }

    async fn put_sender_key(&self, address: &str, record: &[u8]) -> Result<()> {
        self.exec(
            "INSERT INTO wa_sender_keys (address, record) VALUES (?1, ?2)
             ON CONFLICT (address) DO UPDATE SET record = excluded.record",
            &[address.into(), record.into()],
        )
    }

    async fn put_sender_keys_batch(&self, sender_keys: &[(Arc<str>, Bytes)]) -> Result<()> {
        self.chunked(
            &[],
            sender_keys,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_sender_keys (address, record) VALUES {}
                     ON CONFLICT (address) DO UPDATE SET record = excluded.record",
                    tuples(0, n, 2)
                )
            },
            |(address, record), p| {
                p.extend([(**address).into(), record.as_ref().into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn get_sender_key(&self, address: &str) -> Result<Option<Vec<u8>>> {
        self.first(
            "SELECT record FROM wa_sender_keys WHERE address = ?1",
            &[address.into()],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }

    async fn delete_sender_key(&self, address: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_sender_keys WHERE address = ?1",
            &[address.into()],
        )
    }
}
