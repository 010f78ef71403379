//! `gsv setup`'s flags, apart from what runs them so the command table
//! (`cli.rs`) names them without depending on the commands setup drives.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Steps: the gateway (--url, --token), the model provider and its key, the model,
your time zone, a chat app, a node on this machine. Each asks with the current
value (or the one detected) as the default; Enter takes it, `skip` skips the step.
A key is kept only once the provider accepted it in one tiny call.

Providers (default model): anthropic (claude-sonnet-4-20250514), openai (gpt-5),
google (gemini-2.5-flash), groq (llama-3.3-70b-versatile), mistral
(mistral-large-latest), deepseek (deepseek-chat), xai (grok-4), openrouter
(anthropic/claude-sonnet-4.5), ollama (llama3.2, no key), workers-ai
(@cf/moonshotai/kimi-k2.5, no key, deployed gateway only).

Examples:
  gsv setup                                        ask step by step
  gsv setup --yes                                  take every default, ask only for a missing key
  KEY=sk-... gsv setup --non-interactive --provider openai --api-key-env KEY --no-channel
  pass show anthropic | gsv setup --non-interactive --api-key - --timezone Europe/Paris
  gsv setup --provider local --base-url http://127.0.0.1:8080/v1 --model qwen3
                                                   an OpenAI-compatible server of your own")]
pub struct SetupArgs {
    /// Never ask: take each value from its flag, else the current (or
    /// detected) one, and fail naming the flag when a needed value is
    /// missing (also the behaviour when standard input is not a terminal)
    #[arg(long)]
    pub non_interactive: bool,

    /// Take every default without asking; ask only for what has none
    /// (a key that is not set yet)
    #[arg(short = 'y', long)]
    pub yes: bool,

    /// Skip steps: model, timezone, channel, node (comma-separated or repeated)
    #[arg(long, value_enum, value_delimiter = ',', value_name = "STEP")]
    pub skip: Vec<Step>,

    /// The model provider (anthropic, openai, google, groq, mistral, deepseek,
    /// xai, openrouter, ollama, workers-ai, or one of your own with --base-url)
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// The provider's API key; `-` reads it from standard input (better than
    /// the command line, which other users of the machine may see)
    #[arg(long, value_name = "KEY", conflicts_with = "api_key_env")]
    pub api_key: Option<String>,

    /// Read the API key from this environment variable
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,

    /// The model id [default: the current one, else the provider's default]
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,

    /// Where the provider is (stored as providers.<provider>.baseUrl before
    /// the check): Ollama elsewhere, llama.cpp, vLLM, any OpenAI-compatible server
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Your time zone, an IANA name such as Europe/Paris [default: the one
    /// set, else this system's]
    #[arg(long, value_name = "ZONE")]
    pub timezone: Option<String>,

    /// Connect the Discord bot with this token (`-`: read from standard input)
    #[arg(long, value_name = "TOKEN", conflicts_with = "discord_bot_token_env")]
    pub discord_bot_token: Option<String>,

    /// Connect the Discord bot with the token in this environment variable
    #[arg(long, value_name = "VAR")]
    pub discord_bot_token_env: Option<String>,

    /// Connect WhatsApp with the channel Worker's own WHATSAPP_* secrets, or
    /// with --whatsapp-phone-number-id and an access token
    #[arg(long)]
    pub whatsapp: bool,

    /// WhatsApp: the business phone number's id (implies --whatsapp)
    #[arg(long, value_name = "ID")]
    pub whatsapp_phone_number_id: Option<String>,

    /// WhatsApp: the number's access token (`-`: read from standard input)
    #[arg(
        long,
        value_name = "TOKEN",
        conflicts_with = "whatsapp_access_token_env"
    )]
    pub whatsapp_access_token: Option<String>,

    /// WhatsApp: the access token in this environment variable
    #[arg(long, value_name = "VAR")]
    pub whatsapp_access_token_env: Option<String>,

    /// Connect the Telegram bot with this token from @BotFather (`-`: read
    /// from standard input)
    #[arg(long, value_name = "TOKEN", conflicts_with = "telegram_bot_token_env")]
    pub telegram_bot_token: Option<String>,

    /// Connect the Telegram bot with the token in this environment variable
    #[arg(long, value_name = "VAR")]
    pub telegram_bot_token_env: Option<String>,

    /// Connect Telegram with the channel Worker's own TELEGRAM_BOT_TOKEN
    #[arg(long)]
    pub telegram: bool,

    /// Link your own WhatsApp number as a device (the WhatsApp Web
    /// channel): draws the QR code to scan with WhatsApp → Linked devices
    #[arg(long)]
    pub whatsapp_web: bool,

    /// WhatsApp Web: link by a pairing code typed on this number's phone
    /// instead of a QR code (implies --whatsapp-web)
    #[arg(long, value_name = "NUMBER")]
    pub whatsapp_web_phone: Option<String>,

    /// Connect no chat app (the same as --skip channel)
    #[arg(long, conflicts_with_all = ["discord_bot_token", "discord_bot_token_env", "whatsapp",
                                      "telegram", "telegram_bot_token", "telegram_bot_token_env",
                                      "whatsapp_web", "whatsapp_web_phone"])]
    pub no_channel: bool,

    /// Install a node on this machine (`gsv node install`): the agent may
    /// then use its shell and files in the node's workspace
    #[arg(long, overrides_with = "no_node")]
    pub node: bool,

    /// Install no node (the same as --skip node)
    #[arg(long, overrides_with = "node")]
    pub no_node: bool,

    /// The node's id [default: node.id from the local config, else node-<hostname>]
    #[arg(long, value_name = "ID")]
    pub node_id: Option<String>,

    /// The directory the node's tools work in [default: node.workspace from
    /// the local config, else the current directory]
    #[arg(long, value_name = "DIR")]
    pub node_workspace: Option<PathBuf>,
}

/// A step `--skip` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Step {
    Model,
    Timezone,
    Channel,
    Node,
}
