//! The local config file (`config.toml`).
//!
//! Kept as a TOML table rather than a typed struct so that sections this
//! binary does not use yet (`[cloudflare]`, `[r2]`, `[channels.*]`, or
//! anything a newer gsv wrote) survive a `local-config set`.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

pub const DEFAULT_GATEWAY_URL: &str = "ws://localhost:8787/ws";
pub const DEFAULT_SESSION_KEY: &str = "agent:main:cli:dm:main";

/// Keys `local-config get/set` accept, with a line of help each.
pub const KNOWN_KEYS: &[(&str, &str)] = &[
    (
        "gateway.url",
        "WebSocket URL of the gateway (default ws://localhost:8787/ws)",
    ),
    (
        "gateway.token",
        "auth token the gateway expects (its auth.token)",
    ),
    ("node.id", "id this machine uses when it runs as a node"),
    ("node.workspace", "directory node tools work in"),
    (
        "session.default_key",
        "session `gsv chat` talks to (default agent:main:cli:dm:main)",
    ),
    ("cloudflare.account_id", "Cloudflare account id (deploy)"),
    ("cloudflare.api_token", "Cloudflare API token (deploy)"),
    ("r2.account_id", "R2 account id (mount)"),
    ("r2.access_key_id", "R2 access key id (mount)"),
    ("r2.secret_access_key", "R2 secret access key (mount)"),
    ("r2.bucket", "R2 bucket name (mount)"),
    ("channels.whatsapp.url", "WhatsApp channel worker URL"),
    ("channels.whatsapp.token", "WhatsApp channel worker token"),
];

/// Keys whose values `local-config show` masks.
const SECRET_KEYS: &[&str] = &[
    "gateway.token",
    "cloudflare.api_token",
    "r2.secret_access_key",
    "channels.whatsapp.token",
];

/// Directory holding `config.toml` and the chat history.
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("GSV_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::config_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join("gsv")
}

pub fn config_path() -> PathBuf {
    config_dir().join("config.toml")
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalConfig {
    table: Table,
}

impl LocalConfig {
    /// Reads the file; a missing file is an empty config, a broken one an error.
    pub fn load_from(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let table: Table = toml::from_str(&text)
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        Ok(Self { table })
    }

    /// Like `load_from`, but a broken file only warns: a bad config must not
    /// stop `gsv chat --url … --token …` from working.
    pub fn load_or_default(path: &Path) -> Self {
        Self::load_from(path).unwrap_or_else(|e| {
            eprintln!(
                "warning: {e}, so gsv uses default settings:\n{}",
                e.root_cause().to_string().trim_end()
            );
            Self::default()
        })
    }

    /// Writes atomically (temp file + rename), file 0600 in a 0700 directory:
    /// the file holds tokens.
    pub fn save_to(&self, path: &Path) -> Result<()> {
        let text = toml::to_string_pretty(&self.table).context("cannot serialize the config")?;
        write_private_file(path, text.as_bytes())
    }

    /// The value at a dotted key, if it is set (as a string).
    pub fn get(&self, key: &str) -> Option<&str> {
        let (sections, leaf) = split_key(key);
        let mut table = &self.table;
        for section in sections {
            table = table.get(section)?.as_table()?;
        }
        table.get(leaf)?.as_str()
    }

    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        check_known_key(key)?;
        let (sections, leaf) = split_key(key);
        let mut table = &mut self.table;
        for section in sections {
            let entry = table
                .entry(section)
                .or_insert_with(|| Value::Table(Table::new()));
            table = match entry {
                Value::Table(t) => t,
                _ => bail!("cannot set {key}: `{section}` in the config file is not a table"),
            };
        }
        table.insert(leaf.to_string(), Value::String(value.to_string()));
        Ok(())
    }

    /// Removes a key; returns whether it was set.
    pub fn unset(&mut self, key: &str) -> Result<bool> {
        check_known_key(key)?;
        let (sections, leaf) = split_key(key);
        let mut table = &mut self.table;
        for section in sections {
            match table.get_mut(section).and_then(Value::as_table_mut) {
                Some(t) => table = t,
                None => return Ok(false),
            }
        }
        Ok(table.remove(leaf).is_some())
    }

    /// The value a command uses: the set one, else the built-in default.
    pub fn effective(&self, key: &str) -> Option<String> {
        self.get(key)
            .map(str::to_string)
            .or_else(|| default_for(key).map(str::to_string))
    }

    pub fn gateway_url(&self) -> String {
        self.get("gateway.url")
            .unwrap_or(DEFAULT_GATEWAY_URL)
            .to_string()
    }

    pub fn gateway_token(&self) -> Option<String> {
        self.get("gateway.token")
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    }

    pub fn default_session_key(&self) -> String {
        match self.get("session.default_key") {
            // v1 treats `main` as shorthand for the CLI's own DM session.
            Some("main") | Some("") | None => DEFAULT_SESSION_KEY.to_string(),
            Some(key) => key.to_string(),
        }
    }

    /// The file as TOML with secrets replaced by `***`.
    pub fn to_masked_toml(&self) -> Result<String> {
        let mut masked = self.clone();
        for key in SECRET_KEYS {
            if let Some(value) = masked.get_str_mut(key) {
                *value = "***".to_string();
            }
        }
        Ok(toml::to_string_pretty(&masked.table)?)
    }

    /// The string set at `key`, for changing in place.
    fn get_str_mut(&mut self, key: &str) -> Option<&mut String> {
        let (sections, leaf) = split_key(key);
        let mut table = &mut self.table;
        for section in sections {
            table = table.get_mut(section)?.as_table_mut()?;
        }
        match table.get_mut(leaf)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

pub fn default_for(key: &str) -> Option<&'static str> {
    match key {
        "gateway.url" => Some(DEFAULT_GATEWAY_URL),
        "session.default_key" => Some(DEFAULT_SESSION_KEY),
        _ => None,
    }
}

pub fn check_known_key(key: &str) -> Result<()> {
    if KNOWN_KEYS.iter().any(|(k, _)| *k == key) {
        return Ok(());
    }
    let known: Vec<&str> = KNOWN_KEYS.iter().map(|(k, _)| *k).collect();
    bail!("unknown key `{key}`. Known keys: {}", known.join(", "))
}

fn split_key(key: &str) -> (Vec<&str>, &str) {
    let mut parts: Vec<&str> = key.split('.').collect();
    let leaf = parts.pop().unwrap_or(key);
    (parts, leaf)
}

/// Creates `path` with mode 0600 (parent directory 0700 if it is new), via a
/// temporary file renamed over it so a crash never leaves half a file.
pub fn write_private_file(path: &Path, contents: &[u8]) -> Result<()> {
    use std::io::Write;

    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = private_open_options().open(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

pub fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))
}

fn private_open_options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory, removed when the test ends.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("gsv-cli-test-{name}-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
        fn join(&self, path: &str) -> PathBuf {
            self.0.join(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn missing_file_gives_defaults() {
        let dir = TempDir::new("missing");
        let config = LocalConfig::load_from(&dir.join("config.toml")).unwrap();
        assert_eq!(config, LocalConfig::default());
        assert_eq!(config.gateway_url(), "ws://localhost:8787/ws");
        assert_eq!(config.gateway_token(), None);
        assert_eq!(config.default_session_key(), "agent:main:cli:dm:main");
        assert_eq!(config.effective("node.id"), None);
    }

    #[test]
    fn set_save_load_round_trip_keeps_unknown_sections() {
        let tmp = TempDir::new("roundtrip");
        let path = tmp.join("nested/config.toml");
        let mut config: LocalConfig = LocalConfig {
            table: toml::from_str("[r2]\nbucket = \"gsv-storage\"\n[future]\nflag = true\n")
                .unwrap(),
        };
        config
            .set("gateway.url", "wss://gsv.example.workers.dev/ws")
            .unwrap();
        config.set("gateway.token", "s3cret").unwrap();
        config.set("node.id", "laptop").unwrap();
        config
            .set("channels.whatsapp.url", "https://wa.example")
            .unwrap();
        config.save_to(&path).unwrap();

        let loaded = LocalConfig::load_from(&path).unwrap();
        assert_eq!(loaded, config);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "[channels.whatsapp]\nurl = \"https://wa.example\"\n\n\
             [future]\nflag = true\n\n\
             [gateway]\ntoken = \"s3cret\"\nurl = \"wss://gsv.example.workers.dev/ws\"\n\n\
             [node]\nid = \"laptop\"\n\n\
             [r2]\nbucket = \"gsv-storage\"\n"
        );
        assert_eq!(loaded.gateway_url(), "wss://gsv.example.workers.dev/ws");
        assert_eq!(loaded.gateway_token(), Some("s3cret".to_string()));
    }

    #[cfg(unix)]
    #[test]
    fn file_is_0600_and_new_dir_0700() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = TempDir::new("mode");
        let dir = tmp.join("gsv");
        let path = dir.join("config.toml");
        // An existing world-readable file must end up private too.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut config = LocalConfig::default();
        config.set("gateway.token", "t").unwrap();
        config.save_to(&path).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);

        let fresh_dir = tmp.join("a/b");
        config.save_to(&fresh_dir.join("config.toml")).unwrap();
        assert_eq!(mode(&fresh_dir), 0o700);
        assert_eq!(mode(&fresh_dir.join("config.toml")), 0o600);
        // No temp file is left behind.
        assert_eq!(std::fs::read_dir(&fresh_dir).unwrap().count(), 1);
    }

    #[test]
    fn broken_file_falls_back_to_defaults() {
        let tmp = TempDir::new("broken");
        let path = tmp.join("config.toml");
        std::fs::write(&path, "[gateway\nurl = ").unwrap();
        assert!(LocalConfig::load_from(&path).is_err());
        assert_eq!(LocalConfig::load_or_default(&path), LocalConfig::default());
    }

    #[test]
    fn unknown_keys_are_refused() {
        let mut config = LocalConfig::default();
        let err = config.set("gateway.tokn", "x").unwrap_err().to_string();
        assert!(
            err.starts_with("unknown key `gateway.tokn`. Known keys: gateway.url, gateway.token,"),
            "{err}"
        );
        assert_eq!(config, LocalConfig::default());
    }

    #[test]
    fn unset_removes_a_key() {
        let mut config = LocalConfig::default();
        config.set("gateway.token", "t").unwrap();
        assert!(config.unset("gateway.token").unwrap());
        assert!(!config.unset("gateway.token").unwrap());
        assert!(!config.unset("r2.bucket").unwrap());
        assert_eq!(config.get("gateway.token"), None);
    }

    #[test]
    fn main_session_shorthand() {
        let mut config = LocalConfig::default();
        config.set("session.default_key", "main").unwrap();
        assert_eq!(config.default_session_key(), "agent:main:cli:dm:main");
        config.set("session.default_key", "agent:ops:main").unwrap();
        assert_eq!(config.default_session_key(), "agent:ops:main");
    }

    #[test]
    fn masked_toml_hides_secrets_only() {
        let mut config = LocalConfig::default();
        config.set("gateway.url", "ws://h/ws").unwrap();
        config.set("gateway.token", "s3cret").unwrap();
        config.set("r2.secret_access_key", "k").unwrap();
        assert_eq!(
            config.to_masked_toml().unwrap(),
            "[gateway]\ntoken = \"***\"\nurl = \"ws://h/ws\"\n\n[r2]\nsecret_access_key = \"***\"\n"
        );
    }
}
