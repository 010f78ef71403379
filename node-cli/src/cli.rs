//! Command-line definition. The doc comments here are the `--help` texts.

use crate::config::KNOWN_KEYS;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "gsv",
    version,
    about = "Chat with your gsv agent and manage its gateway",
    after_help = "\
Examples:
  gsv chat \"What's on my calendar today?\"   one message, reply printed as it streams
  gsv chat                                  interactive session
  gsv config get model                      show the gateway's model settings
  gsv workspace edit MEMORY.md              edit the agent's memory in $EDITOR
  gsv local-config set gateway.url wss://gsv.<you>.workers.dev/ws

Settings are read from the flags, then GSV_URL / GSV_TOKEN, then the local config
file (see `gsv local-config path`)."
)]
pub struct Cli {
    /// Gateway WebSocket URL; an https:// address works too [default: gateway.url
    /// from the local config, else ws://localhost:8787/ws]
    #[arg(
        short,
        long,
        env = "GSV_URL",
        global = true,
        hide_env_values = true,
        value_name = "URL"
    )]
    pub url: Option<String>,

    /// Gateway auth token (the gateway's auth.token) [default: gateway.token from the local config]
    #[arg(
        short,
        long,
        env = "GSV_TOKEN",
        global = true,
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    pub token: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process: boxing setup's flags would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set up step by step: the gateway and its token, a model provider and
    /// its key (checked before it is kept), your time zone, a chat app, a node
    #[command(visible_alias = "onboard")]
    Setup(crate::cmd::setup::args::SetupArgs),

    /// Talk to the agent: send one message, or start an interactive session
    Chat(ChatArgs),

    /// Read or change the gateway's configuration (model, API keys, channels…)
    #[command(subcommand)]
    Config(ConfigCommand),

    /// Read or change this machine's gsv settings (gateway URL, token, defaults)
    #[command(subcommand)]
    LocalConfig(LocalConfigCommand),

    /// List, read, write and edit the agent's workspace files (MEMORY.md, skills/…)
    Workspace(WorkspaceArgs),

    /// Show the agent's skills and whether the connected machines can run them; re-check
    /// the machines' binaries
    #[command(subcommand)]
    Skills(SkillsCommand),

    /// List the agent's sessions; show, preview or change one session
    #[command(subcommand)]
    Session(SessionCommand),

    /// Offer this machine's tools (shell, files, search) to the agent, as a
    /// service or in the foreground
    Node(NodeArgs),

    /// List the tools the agent can use, or call one yourself
    #[command(subcommand)]
    Tools(ToolsCommand),

    /// Show a connected node's log, read through the gateway (`gsv node logs`
    /// reads this machine's own)
    Logs(LogsArgs),

    /// The chat apps the agent is reachable from (Discord, WhatsApp…): list,
    /// start, stop, status
    #[command(subcommand)]
    Channel(ChannelCommand),

    /// People who wrote to the agent from a chat app and wait for your
    /// approval: list, approve, reject
    #[command(subcommand)]
    Pair(PairCommand),

    /// The agent's scheduled jobs and reminders: list, add, edit, rm, run,
    /// runs, status
    #[command(subcommand)]
    Cron(Box<crate::cmd::cron::CronCommand>),

    /// The agent's heartbeats: status, trigger, start
    #[command(subcommand)]
    Heartbeat(crate::cmd::cron::HeartbeatCommand),

    /// What the agent's model calls used and cost, by day and by session
    Usage(crate::cmd::usage::UsageArgs),

    /// Check the setup (gateway, token, model and key, chat apps, nodes,
    /// schedules, memory, workspace, risky settings) and say what fixes each problem
    Doctor(crate::cmd::doctor::DoctorArgs),

    /// The agent's long-term memory: search, get, put, rm, status, repair
    #[command(subcommand)]
    Memory(crate::cmd::memory::MemoryCommand),

    /// Who may make the agent do what: a session's trust level, its
    /// landing rule, and the tools offered or refused (`gsv logs audit`
    /// shows what was called)
    #[command(subcommand)]
    Trust(crate::cmd::trust::TrustCommand),

    /// Tool calls waiting for your approval (`tools.policy.*.ask`): list,
    /// approve, deny
    #[command(subcommand)]
    Approvals(crate::cmd::trust::ApprovalsCommand),

    /// Print a shell completion script (bash, zsh, fish, powershell, elvish)
    #[command(after_help = "\
Examples:
  gsv completions bash > ~/.local/share/bash-completion/completions/gsv
  gsv completions zsh > ~/.zfunc/_gsv       (with fpath+=~/.zfunc before compinit in ~/.zshrc)
  gsv completions fish > ~/.config/fish/completions/gsv.fish
  gsv completions powershell >> $PROFILE

Or load it for the current shell only: source <(gsv completions bash)")]
    Completions {
        /// The shell to write the script for
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  gsv logs                      the last 100 lines of the only connected node
  gsv logs --node laptop -n 20  the last 20 lines of node laptop
  gsv logs --node laptop -f     and keep printing new lines as they come
  gsv logs audit -n 20          the last 20 tool calls of people other than the owner")]
pub struct LogsArgs {
    /// `audit`: the tool calls of turns below the owner (people, groups,
    /// their jobs), each with its level, decision and rule
    #[arg(value_parser = ["audit"])]
    pub what: Option<String>,
    /// With `audit`: only this session's calls
    #[arg(long, value_name = "KEY")]
    pub session: Option<String>,
    /// The node [default: the only connected node]
    #[arg(long, value_name = "ID")]
    pub node: Option<String>,
    /// How many of the last lines to show (1–5000)
    #[arg(short = 'n', long, default_value_t = 100, value_name = "N")]
    pub lines: u32,
    /// Keep asking for new lines every 2 s and print them (Ctrl-C ends it)
    #[arg(short, long)]
    pub follow: bool,
}

#[derive(Debug, Subcommand)]
#[command(after_help = "\
Examples:
  gsv channel list
  gsv channel start discord
  gsv channel status whatsapp --account shop
  gsv channel stop discord")]
pub enum ChannelCommand {
    /// Every channel account the gateway knows: connected or not, last
    /// message, undelivered answers
    List {
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Start an account of a channel (Discord: connect the bot; WhatsApp:
    /// take the number's webhooks and sends; Telegram: set the bot's
    /// webhook, or long-poll)
    #[command(after_help = "\
Examples:
  gsv channel start discord                     uses the channel Worker's DISCORD_BOT_TOKEN secret
  gsv channel start discord --bot-token \"$TOKEN\"  hands it the token instead (kept by the channel, never shown)
  gsv channel start whatsapp                    the Worker's WHATSAPP_PHONE_NUMBER_ID and WHATSAPP_ACCESS_TOKEN
  gsv channel start whatsapp --account shop --phone-number-id 1065… --access-token \"$TOKEN\"
                                                a second number of the same Meta app
  gsv channel start telegram --bot-token \"$TOKEN\"  a bot from @BotFather (or the Worker's TELEGRAM_BOT_TOKEN)
  gsv channel start telegram --public-url https://x.trycloudflare.com
                                                updates by webhook there (default: the Worker's
                                                TELEGRAM_PUBLIC_URL; none: long polling)")]
    Start {
        /// Channel name (discord, whatsapp, …)
        channel: String,
        /// Account id, for several bots or numbers on one channel
        #[arg(long, default_value = "default")]
        account: String,
        /// A bot token for the channel to keep
        #[arg(long, value_name = "TOKEN")]
        bot_token: Option<String>,
        /// WhatsApp: the business phone number's id (Meta app → WhatsApp → API Setup)
        #[arg(long, value_name = "ID")]
        phone_number_id: Option<String>,
        /// WhatsApp: an access token for the number, for the channel to keep
        #[arg(long, value_name = "TOKEN")]
        access_token: Option<String>,
        /// Telegram: the channel Worker's public origin, for the bot's webhook
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
    },
    /// Link an account that logs in by a code (WhatsApp Web: the phone
    /// scans a QR code, or types a pairing code); waits until it is linked
    #[command(after_help = "\
Examples:
  gsv channel login whatsapp-web                 draws the QR code here, a new one as WhatsApp rotates it
  gsv channel login whatsapp-web --phone +15551234567
                                                 a pairing code to type on that phone instead
  gsv channel login whatsapp-web --force         unlinks the linked device and links again")]
    Login {
        channel: String,
        #[arg(long, default_value = "default")]
        account: String,
        /// Link again even when already linked
        #[arg(long)]
        force: bool,
        /// Link by a pairing code typed on this number's phone, not a QR code
        #[arg(long, value_name = "NUMBER")]
        phone: Option<String>,
        /// Give up after this many seconds
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
    /// Unlink an account (WhatsApp Web: removes the linked device and
    /// forgets its keys)
    Logout {
        channel: String,
        #[arg(long, default_value = "default")]
        account: String,
    },
    /// Stop an account of a channel
    Stop {
        channel: String,
        #[arg(long, default_value = "default")]
        account: String,
    },
    /// Ask the channel how its accounts are doing
    Status {
        channel: String,
        /// One account [default: all of the channel's]
        #[arg(long)]
        account: Option<String>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum PairCommand {
    /// Pending pairing requests with their codes (a code lives one hour)
    List {
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Let a sender talk to the agent: by the code they were given, or as
    /// CHANNEL:SENDER_ID
    #[command(after_help = "\
Examples:
  gsv pair approve K7MX4Q2P
  gsv pair approve discord:81234567890")]
    Approve {
        /// The pairing code, or channel:senderId
        request: String,
    },
    /// Drop a pairing request (the sender may ask again later)
    Reject {
        /// The pairing code, or channel:senderId
        request: String,
    },
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  gsv node --foreground --id laptop --workspace ~/code
  gsv node install --id server --workspace /srv/work    (systemd user unit / launchd agent)
  gsv node status
  gsv node logs --follow

Tools see only the workspace directory (symlinks that leave it included) unless
the node runs with --allow-outside-workspace. Without a subcommand or
--foreground, `gsv node` installs and starts the service.")]
pub struct NodeArgs {
    #[command(subcommand)]
    pub command: Option<NodeCommand>,

    #[command(flatten)]
    pub run: NodeRunArgs,
}

#[derive(Debug, Clone, Args)]
pub struct NodeRunArgs {
    /// Run in this terminal instead of as a service (logs also go to stderr)
    #[arg(long)]
    pub foreground: bool,

    /// Node id, the prefix of its tool names [default: node.id from the local
    /// config, else node-<hostname>]
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,

    /// Directory the tools work in [default: node.workspace from the local
    /// config, else the current directory]
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// Let tools read, write and run outside the workspace
    #[arg(long)]
    pub allow_outside_workspace: bool,
}

#[derive(Debug, Subcommand)]
pub enum NodeCommand {
    /// Install and start the node as a user service (systemd on Linux, launchd on macOS)
    Install(NodeRunArgs),
    /// Stop and remove the service
    Uninstall,
    /// Start the installed service
    Start,
    /// Stop the service
    Stop,
    /// Show whether the service is installed and running
    Status,
    /// Show the node's log
    Logs {
        /// How many lines to show
        #[arg(short, long, default_value_t = 100)]
        lines: usize,
        /// Keep printing new lines as they are written
        #[arg(short, long)]
        follow: bool,
    },
}

#[derive(Debug, Subcommand)]
#[command(after_help = "\
Examples:
  gsv tools list
  gsv tools call laptop__Bash '{\"command\": \"uname -a\"}'
  gsv tools call laptop__Read '{\"path\": \"README.md\", \"limit\": 20}'")]
pub enum ToolsCommand {
    /// List native tools and the tools of every connected node
    List {
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Call a node tool and print its result
    Call {
        /// Namespaced tool name, NODE__Tool
        #[arg(value_name = "TOOL")]
        tool: String,
        /// Arguments as a JSON object
        #[arg(value_name = "JSON", default_value = "{}")]
        args: String,
    },
}

#[derive(Debug, Subcommand)]
#[command(after_help = "\
KEY is a session key such as agent:main:cli:dm:main [default: session.default_key
from the local config, else agent:main:cli:dm:main].

Examples:
  gsv session list
  gsv session get
  gsv session preview agent:main:work -l 5
  gsv session set model openai/gpt-4.1
  gsv session set agent:main:work resetPolicy.mode idle")]
pub enum SessionCommand {
    /// List sessions, most recently active first
    List {
        /// How many sessions to show
        #[arg(short, long, default_value_t = 50, value_name = "N")]
        limit: u32,
        /// How many of the most recent sessions to skip
        #[arg(long, value_name = "N")]
        offset: Option<u32>,
    },
    /// Show a session: ids, token counts, settings, reset policy
    Get {
        /// Session key [default: the configured default session]
        key: Option<String>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Show a session's message and token counts, and whether it is running
    Stats {
        /// Session key [default: the configured default session]
        key: Option<String>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Show a session's current id and the ids it had before each reset
    History {
        /// Session key [default: the configured default session]
        key: Option<String>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Show a session's last messages
    Preview {
        /// Session key [default: the configured default session]
        key: Option<String>,
        /// How many of the last messages to show
        #[arg(short, long, default_value_t = 20, value_name = "N")]
        limit: u32,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Archive the whole conversation to R2 and start a new session (the
    /// same key, a new session id; the old transcript stays readable)
    Reset {
        /// Session key [default: the configured default session]
        key: Option<String>,
    },
    /// Keep the last N messages and archive the rest to R2 (no summary; tool
    /// calls are never separated from their results)
    Compact {
        /// Session key [default: the configured default session]
        key: Option<String>,
        /// How many of the last messages to keep
        #[arg(short, long, default_value_t = 20, value_name = "N")]
        keep: u32,
    },
    /// Read archived messages back (compaction parts, then the reset archive)
    Transcript {
        /// Session key [default: the configured default session]
        key: Option<String>,
        /// Which session id [default: the current one]; see `gsv session history`
        #[arg(long, value_name = "ID")]
        session_id: Option<String>,
        /// First message to show
        #[arg(long, default_value_t = 0, value_name = "N")]
        offset: u32,
        /// How many messages to show
        #[arg(short, long, default_value_t = 100, value_name = "N")]
        limit: u32,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Change one setting of a session: set [KEY] PATH VALUE
    #[command(
        override_usage = "gsv session set [KEY] PATH VALUE",
        after_help = "\
Paths: label, model (provider/id, or id alone), model.provider, model.id,
thinkingLevel, systemPrompt, maxTokens, resetPolicy.mode (manual, daily or idle),
resetPolicy.atHour (0-23), resetPolicy.idleMinutes. VALUE null clears the setting.
Setting resetPolicy.atHour or resetPolicy.idleMinutes also switches the mode to
daily or idle.

Examples:
  gsv session set label \"Kitchen display\"
  gsv session set model anthropic/claude-sonnet-4-5
  gsv session set agent:main:work thinkingLevel high
  gsv session set resetPolicy.mode idle
  gsv session set resetPolicy.idleMinutes 30
  gsv session set systemPrompt null"
    )]
    Set {
        /// [KEY] PATH VALUE, described by the usage line and the text after it
        #[arg(
            required = true,
            num_args = 2..=3,
            value_name = "ARGS",
            allow_hyphen_values = true,
            hide = true
        )]
        args: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List the agent's skills: eligible ones first, with why the others are not
    Status {
        /// Agent whose skills to show [default: the gateway's default agent]
        #[arg(short, long, value_name = "ID")]
        agent: Option<String>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Ask the connected machines which binaries the skills need are on
    /// their PATH, then list the skills as `status` does
    #[command(after_help = "\
Nodes that checked in the last 5 minutes are skipped unless --force is given; so are
nodes that cannot run commands. The gateway also checks every node when it connects.")]
    Update {
        /// Agent whose skills to check [default: the gateway's default agent]
        #[arg(value_name = "AGENT")]
        agent: Option<String>,
        /// The same, as a flag (like `skills status --agent`)
        #[arg(
            short = 'a',
            long = "agent",
            value_name = "ID",
            conflicts_with = "agent"
        )]
        agent_flag: Option<String>,
        /// Probe every node, even those that answered recently
        #[arg(long)]
        force: bool,
        /// How long to wait for the nodes, in ms (1000–120000) [default: 15000]
        #[arg(long, value_name = "N")]
        timeout_ms: Option<u64>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  gsv chat \"Summarize my unread mail\"
  gsv chat -s agent:main:work \"Status of the deploy?\"
  gsv chat --attach photo.jpg \"What plant is this?\"
  gsv chat --raw \"Draft a README\"  the markdown as the agent wrote it, unstyled
  gsv chat                      (interactive: /quit, exit or Ctrl-D leaves)

Replies are markdown, shown styled in a terminal; they are printed exactly as
sent with --raw, when the output is not a terminal, or when NO_COLOR is set.

In a chat: /stop cancels the running reply and its pending tool calls;
/new (or /reset) starts a new session, /compact [N] keeps the last N
messages, /status, /model [provider/id], /think [level]; /help lists them.
/t:high or /m:provider/id inside a message apply to that message only.
Exit status: 0 on a reply, 1 on an error, 130 when stopped with Ctrl-C.")]
pub struct ChatArgs {
    /// The message to send. Without it, gsv starts an interactive session
    /// (line editing, history kept in the config directory).
    #[arg(value_name = "MESSAGE")]
    pub message: Option<String>,

    /// Session to talk in [default: session.default_key from the local config,
    /// else agent:main:cli:dm:main]
    #[arg(short, long, value_name = "KEY")]
    pub session: Option<String>,

    /// Send FILE with the message (a photo, a voice note, a document; at most
    /// 25 MB each). Repeatable; with it, MESSAGE may be left out.
    #[arg(long = "attach", value_name = "FILE")]
    pub attach: Vec<std::path::PathBuf>,

    /// Print replies exactly as sent, markdown unrendered (the default when
    /// stdout is not a terminal or NO_COLOR is set)
    #[arg(long)]
    pub raw: bool,
}

#[derive(Debug, Subcommand)]
#[command(after_help = "\
Paths are dotted, e.g. model.provider, model.id, apiKeys.anthropic, auth.token,
channels.discord.dmPolicy.")]
pub enum ConfigCommand {
    /// Print the value at PATH as JSON, or the whole configuration (secrets masked)
    #[command(after_help = "\
Examples:
  gsv config get                  everything
  gsv config get model            the model settings
  gsv config get model.id
  gsv config get channels.discord")]
    Get {
        /// Dotted path such as model.id; omit it for everything
        path: Option<String>,
    },
    /// Set the value at PATH
    #[command(after_help = "\
VALUE is read as JSON when it is valid JSON (42, true, null, [..], {..}, \"text\"),
otherwise as plain text. Examples:
  gsv config set model.provider anthropic
  gsv config set model.id claude-sonnet-4-5
  gsv config set apiKeys.anthropic sk-ant-...
  gsv config set timeouts.llmMs 120000")]
    Set {
        /// Dotted path such as model.id
        path: String,
        /// New value: JSON, or plain text
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum LocalConfigCommand {
    /// Print the settings file (tokens masked) and the defaults in effect
    Show,
    /// Print one setting's value (tokens included: you asked for it)
    Get {
        /// Dotted key, e.g. gateway.url
        key: String,
    },
    /// Change one setting (the file is created, readable only by you)
    Set {
        /// Dotted key, e.g. gateway.token
        key: String,
        /// New value
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
    /// Remove one setting, going back to its default
    Unset {
        /// Dotted key, e.g. gateway.token
        key: String,
    },
    /// Print where the settings file is (set GSV_CONFIG_DIR to move it)
    Path,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Paths are relative to the workspace root: MEMORY.md, memory/2026-02-18.md,
skills/<name>/SKILL.md. skills/ shows the agent's own skills merged with the global
ones; put or edit there saves the agent's own copy, never the global skill.

Examples:
  gsv workspace ls                          the workspace root
  gsv workspace ls memory
  gsv workspace cat MEMORY.md
  gsv workspace edit SOUL.md                opens $VISUAL or $EDITOR (else vi)
  gsv workspace put notes/plan.md plan.md   upload a local file
  echo '- prefers tea' | gsv workspace put memory/prefs.md
  gsv workspace rm notes/plan.md
  gsv workspace refresh                     after editing files in R2 directly
  gsv workspace ls --agent work             another agent's workspace")]
pub struct WorkspaceArgs {
    /// Agent whose workspace to use [default: the gateway's default agent, usually main]
    #[arg(short, long, global = true, value_name = "ID")]
    pub agent: Option<String>,

    #[command(subcommand)]
    pub command: WorkspaceCommand,
}

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// List a directory: subdirectories (ending in /) first, then files
    Ls {
        /// Directory to list, e.g. memory [default: the workspace root]
        path: Option<String>,
    },
    /// Print a file's content exactly as stored
    Cat {
        /// File to print, e.g. MEMORY.md
        path: String,
    },
    /// Create or replace a file with the content of FILE or standard input
    #[command(after_help = "\
The content must be UTF-8 text. Examples:
  gsv workspace put notes/plan.md ./plan.md
  gsv workspace put USER.md < USER.md
  some-command | gsv workspace put memory/log.md -")]
    Put {
        /// File to write in the workspace, e.g. notes/plan.md
        path: String,
        /// Local file to upload; omit it or give - to read standard input
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Delete a file
    Rm {
        /// File to delete, e.g. notes/plan.md
        path: String,
    },
    /// Edit a file in $VISUAL or $EDITOR (else vi), saving it back when changed
    #[command(after_help = "\
A file that does not exist yet starts empty and is created when you save.
Nothing is written when the editor exits with an error or the content is
unchanged. The editor variable may hold arguments: EDITOR=\"code --wait\".")]
    Edit {
        /// File to edit, e.g. MEMORY.md
        path: String,
    },
    /// Make the agent's next runs read the workspace again now
    #[command(after_help = "\
Edits made through the gateway (this CLI, the web UI, the agent's own
tools) are seen by the very next run. Edits made outside it (the R2
dashboard, `wrangler r2 object put`) are seen within workspace.recheckSeconds
(60 by default), or at once after this command.")]
    Refresh,
}

/// Parses the process arguments, with the list of settings keys (kept in
/// config.rs) added to `local-config --help`.
pub fn parse() -> Cli {
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

pub fn command() -> clap::Command {
    let keys: String = KNOWN_KEYS
        .iter()
        .map(|(key, help)| format!("  {key:<26}{help}\n"))
        .collect();
    let keys_help = format!("Keys:\n{keys}");
    Cli::command().mut_subcommand("local-config", |local| {
        local
            .after_help(keys_help.clone())
            .mut_subcommands(|sub| match sub.get_name() {
                "get" | "set" | "unset" => sub.after_help(keys_help.clone()),
                _ => sub,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn chat_args_parse() {
        let cli = Cli::try_parse_from([
            "gsv",
            "-u",
            "ws://h/ws",
            "chat",
            "-s",
            "agent:x",
            "hi there",
        ])
        .unwrap();
        assert_eq!(cli.url.as_deref(), Some("ws://h/ws"));
        let Command::Chat(args) = cli.command else {
            panic!("not chat")
        };
        assert_eq!(
            (args.message.as_deref(), args.session.as_deref()),
            (Some("hi there"), Some("agent:x"))
        );
    }

    #[test]
    fn workspace_agent_goes_before_or_after_the_subcommand() {
        let parsed: Vec<(Option<String>, String)> = [
            vec!["gsv", "workspace", "--agent", "work", "ls"],
            vec!["gsv", "workspace", "ls", "memory", "-a", "work"],
            vec!["gsv", "workspace", "put", "notes/a.md", "-"],
            vec!["gsv", "workspace", "edit", "MEMORY.md"],
        ]
        .into_iter()
        .map(|args| {
            let Command::Workspace(ws) = Cli::try_parse_from(args).unwrap().command else {
                panic!("not workspace")
            };
            (ws.agent, format!("{:?}", ws.command))
        })
        .collect();
        assert_eq!(
            parsed,
            vec![
                (Some("work".into()), "Ls { path: None }".into()),
                (Some("work".into()), "Ls { path: Some(\"memory\") }".into()),
                (
                    None,
                    "Put { path: \"notes/a.md\", file: Some(\"-\") }".into()
                ),
                (None, "Edit { path: \"MEMORY.md\" }".into()),
            ]
        );
    }

    #[test]
    fn skills_update_args() {
        let parse = |args: &[&str]| {
            let Command::Skills(cmd) = Cli::try_parse_from(args).unwrap().command else {
                panic!("not skills")
            };
            format!("{cmd:?}")
        };
        assert_eq!(
            parse(&["gsv", "skills", "update", "work", "--force", "--timeout-ms", "3000"]),
            "Update { agent: Some(\"work\"), agent_flag: None, force: true, timeout_ms: Some(3000), json: false }"
        );
        assert_eq!(
            parse(&["gsv", "skills", "update", "-a", "work"]),
            "Update { agent: None, agent_flag: Some(\"work\"), force: false, timeout_ms: None, json: false }"
        );
        assert!(Cli::try_parse_from(["gsv", "skills", "update", "a", "--agent", "b"]).is_err());
    }

    #[test]
    fn logs_args() {
        let parse = |args: &[&str]| {
            let Command::Logs(a) = Cli::try_parse_from(args).unwrap().command else {
                panic!("not logs")
            };
            (a.node, a.lines, a.follow)
        };
        assert_eq!(parse(&["gsv", "logs"]), (None, 100, false));
        assert_eq!(
            parse(&["gsv", "logs", "--node", "laptop", "-n", "20", "--follow"]),
            (Some("laptop".into()), 20, true)
        );
        assert_eq!(
            parse(&["gsv", "logs", "-f", "--lines", "5"]),
            (None, 5, true)
        );
    }

    #[test]
    fn global_flags_go_after_the_subcommand_too() {
        let cli = Cli::try_parse_from(["gsv", "config", "get", "model", "--token", "t"]).unwrap();
        assert_eq!(cli.token.as_deref(), Some("t"));
    }
}
