//! The store's tables, as versioned migrations: migration `i` is schema
//! version `i + 1`, applied once by `gsv_worker_sql::migrate` (a script may
//! hold several statements: a Durable Object's `sql.exec` runs them all).

/// The migrations, oldest first. Never edit one that has shipped: add one.
pub const MIGRATIONS: &[&str] = &[
    // 1: the linked device, its Signal keys and sessions, app state, and
    // the protocol's bookkeeping.
    "CREATE TABLE wa_device (id INTEGER PRIMARY KEY CHECK (id = 1), device TEXT NOT NULL);
     CREATE TABLE wa_identities (address TEXT PRIMARY KEY, key BLOB NOT NULL);
     CREATE TABLE wa_sessions (address TEXT PRIMARY KEY, record BLOB NOT NULL);
     CREATE TABLE wa_prekeys (id INTEGER PRIMARY KEY, record BLOB NOT NULL, uploaded INTEGER NOT NULL);
     CREATE TABLE wa_signed_prekeys (id INTEGER PRIMARY KEY, record BLOB NOT NULL);
     CREATE TABLE wa_sender_keys (address TEXT PRIMARY KEY, record BLOB NOT NULL);
     CREATE TABLE wa_app_state_sync_keys (key_id BLOB PRIMARY KEY, key_data BLOB NOT NULL, fingerprint BLOB NOT NULL, timestamp INTEGER NOT NULL, seq INTEGER NOT NULL);
     CREATE TABLE wa_app_state_versions (name TEXT PRIMARY KEY, version INTEGER NOT NULL, hash BLOB NOT NULL, mac_mismatch_fatal INTEGER NOT NULL);
     CREATE TABLE wa_app_state_index_values (name TEXT NOT NULL, index_key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (name, index_key));
     CREATE TABLE wa_app_state_mutation_macs (name TEXT NOT NULL, index_mac BLOB NOT NULL, version INTEGER NOT NULL, value_mac BLOB NOT NULL, PRIMARY KEY (name, index_mac));
     CREATE TABLE wa_sender_key_devices (group_jid TEXT NOT NULL, device_jid TEXT NOT NULL, has_key INTEGER NOT NULL, PRIMARY KEY (group_jid, device_jid));
     CREATE TABLE wa_lid_pn_mappings (lid TEXT PRIMARY KEY, phone_number TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, learning_source TEXT NOT NULL);
     CREATE INDEX wa_lid_pn_mappings_phone ON wa_lid_pn_mappings (phone_number, updated_at);
     CREATE TABLE wa_base_keys (address TEXT NOT NULL, message_id TEXT NOT NULL, base_key BLOB NOT NULL, PRIMARY KEY (address, message_id));
     CREATE TABLE wa_device_lists (user TEXT PRIMARY KEY, devices TEXT NOT NULL, timestamp INTEGER NOT NULL, phash TEXT, raw_id INTEGER);
     CREATE TABLE wa_group_metadata (group_jid TEXT PRIMARY KEY, info BLOB NOT NULL);
     CREATE TABLE wa_tc_tokens (jid TEXT PRIMARY KEY, token BLOB NOT NULL, token_timestamp INTEGER NOT NULL, sender_timestamp INTEGER);
     CREATE TABLE wa_sent_messages (chat_jid TEXT NOT NULL, message_id TEXT NOT NULL, payload BLOB NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (chat_jid, message_id));
     CREATE TABLE wa_pending_inbound (chat TEXT NOT NULL, sender TEXT NOT NULL, id TEXT NOT NULL, message BLOB NOT NULL, inserted_at INTEGER NOT NULL, PRIMARY KEY (chat, sender, id));
     CREATE TABLE wa_msg_secrets (chat TEXT NOT NULL, sender TEXT NOT NULL, msg_id TEXT NOT NULL, secret BLOB NOT NULL, expires_at INTEGER NOT NULL, message_ts INTEGER NOT NULL, PRIMARY KEY (chat, sender, msg_id))",
];
