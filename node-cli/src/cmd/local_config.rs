//! `gsv local-config`: this machine's settings file. No gateway needed.

use crate::cli::LocalConfigCommand;
use crate::config::{self, check_known_key, default_for, LocalConfig, KNOWN_KEYS};
use anyhow::{anyhow, bail, Result};
use std::path::Path;

pub fn run(command: LocalConfigCommand) -> Result<()> {
    let path = config::config_path();
    match command {
        LocalConfigCommand::Show => {
            print!("{}", show(&LocalConfig::load_or_default(&path), &path)?)
        }
        LocalConfigCommand::Path => println!("{}", path.display()),
        LocalConfigCommand::Get { key } => {
            check_known_key(&key)?;
            match LocalConfig::load_or_default(&path).effective(&key) {
                Some(value) => println!("{value}"),
                None => {
                    bail!("{key} is not set (set it with `gsv local-config set {key} <value>`)")
                }
            }
        }
        LocalConfigCommand::Set { key, value } => {
            let mut config = load_for_update(&path)?;
            config.set(&key, &value)?;
            config.save_to(&path)?;
            let shown = if is_secret(&key) {
                "***"
            } else {
                value.as_str()
            };
            println!("Set {key} = {shown} in {}", path.display());
        }
        LocalConfigCommand::Unset { key } => {
            let mut config = load_for_update(&path)?;
            if config.unset(&key)? {
                config.save_to(&path)?;
                println!("Removed {key} from {}", path.display());
            } else {
                println!("{key} was not set");
            }
        }
    }
    Ok(())
}

/// Unlike reading, a change must not replace a broken file with defaults.
fn load_for_update(path: &Path) -> Result<LocalConfig> {
    LocalConfig::load_from(path).map_err(|e| {
        anyhow!(
            "{e}; fix or remove it first (nothing was changed):\n{}",
            e.root_cause().to_string().trim_end()
        )
    })
}

fn is_secret(key: &str) -> bool {
    key.ends_with("token") || key.ends_with("secret_access_key")
}

/// The file with secrets masked, plus a note for each default in effect.
fn show(config: &LocalConfig, path: &Path) -> Result<String> {
    let mut text = format!("# {}\n", path.display());
    let body = config.to_masked_toml()?;
    if body.is_empty() {
        text.push_str("# (nothing set yet)\n");
    } else {
        text.push_str(&body);
    }
    for (key, _) in KNOWN_KEYS {
        if let (None, Some(default)) = (config.get(key), default_for(key)) {
            text.push_str(&format!("# {key} is not set: using {default}\n"));
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn show_masks_the_token_and_notes_defaults() {
        let mut config = LocalConfig::default();
        config.set("gateway.token", "s3cret").unwrap();
        assert_eq!(
            show(&config, Path::new("/home/me/.config/gsv/config.toml")).unwrap(),
            "# /home/me/.config/gsv/config.toml\n\
             [gateway]\ntoken = \"***\"\n\
             # gateway.url is not set: using ws://localhost:8787/ws\n\
             # session.default_key is not set: using agent:main:cli:dm:main\n"
        );
    }

    #[test]
    fn show_empty_config() {
        let mut config = LocalConfig::default();
        config.set("gateway.url", "ws://h/ws").unwrap();
        config
            .set("session.default_key", "agent:main:main")
            .unwrap();
        assert_eq!(
            show(&LocalConfig::default(), Path::new("/c.toml")).unwrap(),
            "# /c.toml\n# (nothing set yet)\n\
             # gateway.url is not set: using ws://localhost:8787/ws\n\
             # session.default_key is not set: using agent:main:cli:dm:main\n"
        );
        assert_eq!(
            show(&config, Path::new("/c.toml")).unwrap(),
            "# /c.toml\n[gateway]\nurl = \"ws://h/ws\"\n\n[session]\ndefault_key = \"agent:main:main\"\n"
        );
    }
}
