//! `ProtocolStore`: which group devices hold our sender key, LID ↔ phone
//! number mappings, retry base keys, device lists, group metadata, trusted
//! contact tokens, sent messages kept for retries, and the pending inbound
//! buffer.
//!
//! Lists come back sorted by key (the trait leaves order open). The
//! read-modify-write methods the trait asks to be atomic (tc tokens, the
//! sent-message take) are single statements.

use async_trait::async_trait;
use wacore::store::error::Result;
use wacore::store::traits::{
    DeviceInfo, DeviceListRecord, LidPnMappingEntry, PendingInboundKey, PendingInboundRow,
    ProtocolStore, TcTokenEntry,
};

use super::sql::Sql;
use super::{from_json, list, to_json, tuples, Row, SqlBackend};

const LID_COLUMNS: &str = "lid, phone_number, created_at, updated_at, learning_source";
const UPSERT_LID: &str = "ON CONFLICT (lid) DO UPDATE SET phone_number = excluded.phone_number,
    created_at = excluded.created_at, updated_at = excluded.updated_at,
    learning_source = excluded.learning_source";
const UPSERT_DEVICES: &str = "ON CONFLICT (user) DO UPDATE SET devices = excluded.devices,
    timestamp = excluded.timestamp, phash = excluded.phash, raw_id = excluded.raw_id";
const UPSERT_PENDING: &str = "ON CONFLICT (chat, sender, id) DO UPDATE SET
    message = excluded.message, inserted_at = excluded.inserted_at";

fn lid_mapping(row: &Row) -> Result<LidPnMappingEntry> {
    Ok(LidPnMappingEntry {
        lid: row.text(0)?,
        phone_number: row.text(1)?,
        created_at: row.int(2)?,
        updated_at: row.int(3)?,
        learning_source: row.text(4)?,
    })
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl<S: Sql + Send + Sync> ProtocolStore for SqlBackend<S> {
    async fn get_sender_key_devices(&self, group_jid: &str) -> Result<Vec<(String, bool)>> {
        self.rows(
            "SELECT device_jid, has_key FROM wa_sender_key_devices WHERE group_jid = ?1
             ORDER BY device_jid",
            &[group_jid.into()],
        )?
        .iter()
        .map(|row| Ok((row.text(0)?, row.bool(1)?)))
        .collect()
    }

    async fn set_sender_key_status(&self, group_jid: &str, entries: &[(&str, bool)]) -> Result<()> {
        self.chunked(
            &[group_jid.into()],
            entries,
            2,
            |n| {
                format!(
                    "INSERT INTO wa_sender_key_devices (group_jid, device_jid, has_key) VALUES {}
                     ON CONFLICT (group_jid, device_jid) DO UPDATE SET has_key = excluded.has_key",
                    tuples(1, n, 2)
                )
            },
            |(device_jid, has_key), p| {
                p.extend([(*device_jid).into(), (*has_key).into()]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn clear_sender_key_devices(&self, group_jid: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_sender_key_devices WHERE group_jid = ?1",
            &[group_jid.into()],
        )
    }

    async fn delete_sender_key_device_rows(&self, device_jids: &[&str]) -> Result<()> {
        self.chunked(
            &[],
            device_jids,
            1,
            |n| {
                format!(
                    "DELETE FROM wa_sender_key_devices WHERE device_jid IN ({})",
                    list(0, n)
                )
            },
            |jid, p| {
                p.push((*jid).into());
                Ok(())
            },
        )
        .map(drop)
    }

    async fn clear_all_sender_key_devices(&self) -> Result<()> {
        self.exec("DELETE FROM wa_sender_key_devices", &[])
    }

    async fn get_lid_mapping(&self, lid: &str) -> Result<Option<LidPnMappingEntry>> {
        self.first(
            &format!("SELECT {LID_COLUMNS} FROM wa_lid_pn_mappings WHERE lid = ?1"),
            &[lid.into()],
        )?
        .as_ref()
        .map(lid_mapping)
        .transpose()
    }

    /// The LID last updated for `phone` (on a tie, the one whose row is
    /// newest).
    async fn get_pn_mapping(&self, phone: &str) -> Result<Option<LidPnMappingEntry>> {
        self.first(
            &format!(
                "SELECT {LID_COLUMNS} FROM wa_lid_pn_mappings WHERE phone_number = ?1
                 ORDER BY updated_at DESC, rowid DESC LIMIT 1"
            ),
            &[phone.into()],
        )?
        .as_ref()
        .map(lid_mapping)
        .transpose()
    }

    async fn put_lid_mapping(&self, entry: &LidPnMappingEntry) -> Result<()> {
        self.put_lid_mappings(std::slice::from_ref(entry)).await
    }

    async fn put_lid_mappings(&self, entries: &[LidPnMappingEntry]) -> Result<()> {
        self.chunked(
            &[],
            entries,
            5,
            |n| {
                format!(
                    "INSERT INTO wa_lid_pn_mappings ({LID_COLUMNS}) VALUES {} {UPSERT_LID}",
                    tuples(0, n, 5)
                )
            },
            |e, p| {
                p.extend([
                    e.lid.as_str().into(),
                    e.phone_number.as_str().into(),
                    e.created_at.into(),
                    e.updated_at.into(),
                    e.learning_source.as_str().into(),
                ]);
                Ok(())
            },
        )
        .map(drop)
    }

    /// By LID.
    async fn get_all_lid_mappings(&self) -> Result<Vec<LidPnMappingEntry>> {
        self.rows(
            &format!("SELECT {LID_COLUMNS} FROM wa_lid_pn_mappings ORDER BY lid"),
            &[],
        )?
        .iter()
        .map(lid_mapping)
        .collect()
    }

    async fn save_base_key(&self, address: &str, message_id: &str, base_key: &[u8]) -> Result<()> {
        self.exec(
            "INSERT INTO wa_base_keys (address, message_id, base_key) VALUES (?1, ?2, ?3)
             ON CONFLICT (address, message_id) DO UPDATE SET base_key = excluded.base_key",
            &[address.into(), message_id.into(), base_key.into()],
        )
    }

    async fn has_same_base_key(
        &self,
        address: &str,
        message_id: &str,
        current_base_key: &[u8],
    ) -> Result<bool> {
        self.holds(
            "SELECT EXISTS (SELECT 1 FROM wa_base_keys
                            WHERE address = ?1 AND message_id = ?2 AND base_key = ?3)",
            &[address.into(), message_id.into(), current_base_key.into()],
        )
    }

    async fn delete_base_key(&self, address: &str, message_id: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_base_keys WHERE address = ?1 AND message_id = ?2",
            &[address.into(), message_id.into()],
        )
    }

    async fn update_device_list(&self, record: DeviceListRecord) -> Result<()> {
        self.update_device_lists(vec![record]).await
    }

    async fn update_device_lists(&self, records: Vec<DeviceListRecord>) -> Result<()> {
        self.chunked(
            &[],
            &records,
            5,
            |n| {
                format!(
                    "INSERT INTO wa_device_lists (user, devices, timestamp, phash, raw_id)
                     VALUES {} {UPSERT_DEVICES}",
                    tuples(0, n, 5)
                )
            },
            |r, p| {
                p.extend([
                    r.user.as_str().into(),
                    to_json("device list", &r.devices)?,
                    r.timestamp.into(),
                    r.phash.clone().into(),
                    r.raw_id.into(),
                ]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn get_devices(&self, user: &str) -> Result<Option<DeviceListRecord>> {
        self.first(
            "SELECT user, devices, timestamp, phash, raw_id FROM wa_device_lists WHERE user = ?1",
            &[user.into()],
        )?
        .map(|row| {
            Ok(DeviceListRecord {
                user: row.text(0)?,
                devices: from_json::<Vec<DeviceInfo>>("device list", &row.text(1)?)?,
                timestamp: row.int(2)?,
                phash: row.opt_text(3)?,
                raw_id: row.opt_u32(4)?,
            })
        })
        .transpose()
    }

    async fn delete_devices(&self, user: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_device_lists WHERE user = ?1",
            &[user.into()],
        )
    }

    async fn get_group_metadata(&self, group_jid: &str) -> Result<Option<Vec<u8>>> {
        self.first(
            "SELECT info FROM wa_group_metadata WHERE group_jid = ?1",
            &[group_jid.into()],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }

    async fn put_group_metadata(&self, group_jid: &str, blob: &[u8]) -> Result<()> {
        self.exec(
            "INSERT INTO wa_group_metadata (group_jid, info) VALUES (?1, ?2)
             ON CONFLICT (group_jid) DO UPDATE SET info = excluded.info",
            &[group_jid.into(), blob.into()],
        )
    }

    async fn delete_group_metadata(&self, group_jid: &str) -> Result<()> {
        self.exec(
            "DELETE FROM wa_group_metadata WHERE group_jid = ?1",
            &[group_jid.into()],
        )
    }

    async fn get_tc_token(&self, jid: &str) -> Result<Option<TcTokenEntry>> {
        self.first(
            "SELECT token, token_timestamp, sender_timestamp FROM wa_tc_tokens WHERE jid = ?1",
            &[jid.into()],
        )?
        .map(|row| {
            Ok(TcTokenEntry {
                token: row.blob(0)?,
                token_timestamp: row.int(1)?,
                sender_timestamp: row.opt_int(2)?,
            })
        })
        .transpose()
    }

    async fn put_tc_token(&self, jid: &str, entry: &TcTokenEntry) -> Result<()> {
        self.exec(
            "INSERT INTO wa_tc_tokens (jid, token, token_timestamp, sender_timestamp)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (jid) DO UPDATE SET token = excluded.token,
               token_timestamp = excluded.token_timestamp,
               sender_timestamp = excluded.sender_timestamp",
            &[
                jid.into(),
                entry.token.as_slice().into(),
                entry.token_timestamp.into(),
                entry.sender_timestamp.into(),
            ],
        )
    }

    async fn delete_tc_token(&self, jid: &str) -> Result<()> {
        self.exec("DELETE FROM wa_tc_tokens WHERE jid = ?1", &[jid.into()])
    }

    /// By JID.
    async fn get_all_tc_token_jids(&self) -> Result<Vec<String>> {
        self.rows("SELECT jid FROM wa_tc_tokens ORDER BY jid", &[])?
            .iter()
            .map(|row| row.text(0))
            .collect()
    }

    async fn delete_expired_tc_tokens(&self, token_cutoff: i64, sender_cutoff: i64) -> Result<u32> {
        self.count(
            "DELETE FROM wa_tc_tokens
             WHERE (length(token) = 0 OR token_timestamp < ?1)
               AND (sender_timestamp IS NULL OR sender_timestamp < ?2)
             RETURNING 1",
            &[token_cutoff.into(), sender_cutoff.into()],
        )
    }

    /// One upsert: a byte-less placeholder when absent, else the sender
    /// timestamp moved forward only.
    async fn touch_tc_token_sender_timestamp(
        &self,
        jid: &str,
        sender_timestamp: i64,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO wa_tc_tokens (jid, token, token_timestamp, sender_timestamp)
             VALUES (?1, X'', ?2, ?2)
             ON CONFLICT (jid) DO UPDATE SET sender_timestamp =
               MAX(IFNULL(wa_tc_tokens.sender_timestamp, excluded.sender_timestamp),
                   excluded.sender_timestamp)",
            &[jid.into(), sender_timestamp.into()],
        )
    }

    /// One upsert, newer-wins: the token pair is replaced only over a
    /// placeholder or by a token at least as new; the sender timestamp is
    /// kept.
    async fn store_received_tc_token(
        &self,
        jid: &str,
        token: &[u8],
        token_timestamp: i64,
    ) -> Result<()> {
        self.exec(
            "INSERT INTO wa_tc_tokens (jid, token, token_timestamp, sender_timestamp)
             VALUES (?1, ?2, ?3, NULL)
             ON CONFLICT (jid) DO UPDATE SET token = excluded.token,
               token_timestamp = excluded.token_timestamp
             WHERE length(wa_tc_tokens.token) = 0
                OR excluded.token_timestamp >= wa_tc_tokens.token_timestamp",
            &[jid.into(), token.into(), token_timestamp.into()],
        )
    }

    /// Kept until `delete_expired_sent_messages`; unlike `InMemoryBackend`
    /// there is no count cap, the table being on disk.
    async fn store_sent_message(
        &self,
        chat_jid: &str,
        message_id: &str,
        payload: &[u8],
    ) -> Result<()> {
        self.exec(
            "INSERT INTO wa_sent_messages (chat_jid, message_id, payload, created_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (chat_jid, message_id) DO UPDATE SET payload = excluded.payload,
               created_at = excluded.created_at",
            &[
                chat_jid.into(),
                message_id.into(),
                payload.into(),
                wacore::time::now_secs().into(),
            ],
        )
    }

    async fn take_sent_message(&self, chat_jid: &str, message_id: &str) -> Result<Option<Vec<u8>>> {
        self.first(
            "DELETE FROM wa_sent_messages WHERE chat_jid = ?1 AND message_id = ?2
             RETURNING payload",
            &[chat_jid.into(), message_id.into()],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }

    async fn delete_expired_sent_messages(&self, cutoff_timestamp: i64) -> Result<u32> {
        self.count(
            "DELETE FROM wa_sent_messages WHERE created_at < ?1 RETURNING 1",
            &[cutoff_timestamp.into()],
        )
    }

    async fn store_pending_inbound(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
        message: &[u8],
    ) -> Result<()> {
        self.store_pending_inbound_batch(&[PendingInboundRow {
            chat,
            sender,
            id,
            message,
        }])
        .await
    }

    async fn get_pending_inbound(
        &self,
        chat: &str,
        sender: &str,
        id: &str,
    ) -> Result<Option<Vec<u8>>> {
        self.first(
            "SELECT message FROM wa_pending_inbound WHERE chat = ?1 AND sender = ?2 AND id = ?3",
            &[chat.into(), sender.into(), id.into()],
        )?
        .map(|row| row.blob(0))
        .transpose()
    }

    async fn delete_pending_inbound(&self, chat: &str, sender: &str, id: &str) -> Result<()> {
        self.delete_pending_inbound_batch(&[PendingInboundKey { chat, sender, id }])
            .await
    }

    async fn delete_expired_pending_inbound(&self, cutoff_timestamp: i64) -> Result<u32> {
        self.count(
            "DELETE FROM wa_pending_inbound WHERE inserted_at < ?1 RETURNING 1",
            &[cutoff_timestamp.into()],
        )
    }

    async fn store_pending_inbound_batch(&self, rows: &[PendingInboundRow<'_>]) -> Result<()> {
        self.chunked(
            &[wacore::time::now_secs().into()],
            rows,
            4,
            |n| {
                format!(
                    "INSERT INTO wa_pending_inbound (inserted_at, chat, sender, id, message)
                     VALUES {} {UPSERT_PENDING}",
                    tuples(1, n, 4)
                )
            },
            |r, p| {
                p.extend([
                    r.chat.into(),
                    r.sender.into(),
                    r.id.into(),
                    r.message.into(),
                ]);
                Ok(())
            },
        )
        .map(drop)
    }

    async fn delete_pending_inbound_batch(&self, keys: &[PendingInboundKey<'_>]) -> Result<()> {
        self.chunked(
            &[],
            keys,
            3,
            |n| {
                format!(
                    "DELETE FROM wa_pending_inbound WHERE (chat, sender, id) IN (VALUES {})",
                    tuples(0, n, 3)
                )
            },
            |k, p| {
                p.extend([k.chat.into(), k.sender.into(), k.id.into()]);
                Ok(())
            },
        )
        .map(drop)
    }
}
