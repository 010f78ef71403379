//! What `gsv setup` asks next, which default it offers, how it reads an
//! answer, what it says about a check and what its summary reads: pure
//! functions of whole values, so the wizard's logic is tested without a
//! terminal or a gateway (`setup.rs` does the I/O).

use gsv_protocol::{ChannelsListResult, ModelCheckFailure, ModelCheckResult, ToolsListResult};
use serde_json::Value;

/// The address `bash scripts/dev.sh` serves the gateway on.
pub const LOCAL_GATEWAY_URL: &str = "ws://127.0.0.1:8787/ws";

/// The model of the gateway's default config (src/config/defaults.rs):
/// `config.get` shows it whatever the provider, and the gateway uses the
/// provider's own default model unless `model.id` was set.
const CONFIG_DEFAULT_MODEL: &str = "claude-sonnet-4-20250514";

/// How setup gets its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ask each question, the current or detected value as the default.
    Ask,
    /// `--yes`: take every default; ask only for what has none (a key).
    Defaults,
    /// `--non-interactive`, or standard input is not a terminal: never ask;
    /// a needed value that is missing is an error naming its flag.
    Never,
}

impl Mode {
    pub fn new(non_interactive: bool, yes: bool, stdin_is_terminal: bool) -> Self {
        match (non_interactive || !stdin_is_terminal, yes) {
            (true, _) => Mode::Never,
            (false, true) => Mode::Defaults,
            (false, false) => Mode::Ask,
        }
    }

    /// Whether a value that has a default is asked for anyway.
    pub fn asks_defaults(self) -> bool {
        self == Mode::Ask
    }

    /// Whether a value that has no default may be asked for.
    pub fn may_ask(self) -> bool {
        self != Mode::Never
    }
}

/// A provider the gateway knows by name (src/llm/named.rs: the e2e test
/// holds the two lists together).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provider {
    pub name: &'static str,
    pub default_model: &'static str,
    pub needs_key: bool,
    pub about: &'static str,
}

const fn p(
    name: &'static str,
    default_model: &'static str,
    needs_key: bool,
    about: &'static str,
) -> Provider {
    Provider {
        name,
        default_model,
        needs_key,
        about,
    }
}

pub const PROVIDERS: &[Provider] = &[
    p(
        "anthropic",
        "claude-sonnet-4-20250514",
        true,
        "Anthropic's Claude",
    ),
    p("openai", "gpt-5", true, "OpenAI"),
    p("google", "gemini-2.5-flash", true, "Google's Gemini"),
    p("groq", "llama-3.3-70b-versatile", true, "Groq"),
    p("mistral", "mistral-large-latest", true, "Mistral"),
    p("deepseek", "deepseek-chat", true, "DeepSeek"),
    p("xai", "grok-4", true, "xAI's Grok"),
    p(
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        true,
        "OpenRouter, many vendors' models",
    ),
    p(
        "ollama",
        "llama3.2",
        false,
        "Ollama on this machine, no key",
    ),
    p(
        "workers-ai",
        "@cf/moonshotai/kimi-k2.5",
        false,
        "Cloudflare Workers AI, deployed gateway only, no key",
    ),
];

/// The named provider `name` (any case; `gemini` is `google`).
pub fn provider(name: &str) -> Option<&'static Provider> {
    let name = name.trim().to_ascii_lowercase();
    let name = if name == "gemini" { "google" } else { &name };
    PROVIDERS.iter().find(|p| p.name == name)
}

/// What the gateway holds now: the defaults of a re-run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Current {
    pub provider: String,
    /// The model a run uses (the provider's default unless `model.id` was set).
    pub model: String,
    /// Providers with a key set (never the keys: the gateway shows `***`).
    pub keys: Vec<String>,
    /// Providers configured with a `baseUrl` of their own.
    pub base_urls: Vec<String>,
    pub timezone: String,
    /// `channel/account` and whether it is connected, one each.
    pub channels: Vec<String>,
    /// Ids of the nodes connected now.
    pub nodes: Vec<String>,
}

impl Current {
    /// Read from the whole `config.get` answer, `channels.list` and `tools.list`.
    pub fn read(
        config: &Value,
        channels: Option<&ChannelsListResult>,
        tools: Option<&ToolsListResult>,
    ) -> Self {
        let text = |pointer: &str| {
            config
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let names = |pointer: &str, keep: &dyn Fn(&Value) -> bool| -> Vec<String> {
            let mut names: Vec<String> = config
                .pointer(pointer)
                .and_then(Value::as_object)
                .map(|o| {
                    o.iter()
                        .filter(|(_, v)| keep(v))
                        .map(|(k, _)| k.clone())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names
        };
        let provider = match text("/model/provider") {
            p if p.is_empty() => "anthropic".to_string(),
            p => p,
        };
        let model = effective_model(&provider, &text("/model/id"));
        let timezone = match text("/userTimezone") {
            z if z.is_empty() => "UTC".to_string(),
            z => z,
        };
        let channels = channels
            .map(|list| {
                list.channels
                    .iter()
                    .map(|c| {
                        let state = match &c.status {
                            Some(s) if s.connected => "connected",
                            _ => "not connected",
                        };
                        format!("{}/{} ({state})", c.channel, c.account_id)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut nodes: Vec<String> = tools
            .map(|t| {
                t.tools
                    .iter()
                    .filter_map(|t| t.name.split_once("__").map(|(node, _)| node))
                    .filter(|node| *node != "gsv")
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        nodes.sort();
        nodes.dedup();
        Current {
            provider,
            model,
            keys: names("/apiKeys", &|v| v.as_str().is_some_and(|s| !s.is_empty())),
            base_urls: names("/providers", &|v| v.get("baseUrl").is_some()),
            timezone,
            channels,
            nodes,
        }
    }

    pub fn has_key(&self, provider: &str) -> bool {
        self.keys.iter().any(|k| k == provider)
    }
}

/// The model a run of `provider` uses when `config.get` says `model_id`.
pub fn effective_model(provider: &str, model_id: &str) -> String {
    match self::provider(provider) {
        Some(p) if model_id.is_empty() || model_id == CONFIG_DEFAULT_MODEL => {
            p.default_model.to_string()
        }
        _ => model_id.to_string(),
    }
}

/// The value to store at `model.id`: null for the provider's own default
/// (so a later change of provider brings that provider's default along),
/// else the model.
pub fn model_id_value(provider: &str, model: &str) -> Value {
    match self::provider(provider) {
        Some(p) if p.default_model == model => Value::Null,
        _ => Value::String(model.to_string()),
    }
}

/// What the gateway holds now, shown before the questions of a re-run.
pub fn render_current(c: &Current) -> String {
    let key = match (c.has_key(&c.provider), provider(&c.provider)) {
        (true, _) => "key set",
        (false, Some(p)) if !p.needs_key => "no key needed",
        (false, _) => "no key set",
    };
    let list = |items: &[String], none: &str| match items {
        [] => none.to_string(),
        items => items.join(", "),
    };
    format!(
        "Now:\n  model      {} / {} ({key})\n  time zone  {}\n  channels   {}\n  nodes      {}\n",
        c.provider,
        c.model,
        c.timezone,
        list(&c.channels, "none"),
        list(&c.nodes, "none connected"),
    )
}

/// An answer read.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    Take(T),
    Skip,
    /// Not understood: say this and ask again.
    Again(String),
}

fn is_skip(answer: &str) -> bool {
    matches!(answer.to_ascii_lowercase().as_str(), "skip" | "s" | "-")
}

/// The numbered list of providers, `default` marked.
pub fn render_providers(c: &Current, default: &str) -> String {
    let mut out = String::from("Which model provider?\n");
    for (i, p) in PROVIDERS.iter().enumerate() {
        let mut notes = Vec::new();
        if c.has_key(p.name) {
            notes.push("key set");
        }
        if p.name == c.provider {
            notes.push("current");
        }
        let notes = match notes.is_empty() {
            true => String::new(),
            false => format!("  [{}]", notes.join(", ")),
        };
        let mark = if p.name == default { '*' } else { ' ' };
        out.push_str(&format!(
            "{mark}{:>2}) {:<11} {}{notes}\n",
            i + 1,
            p.name,
            p.about
        ));
    }
    for name in c.base_urls.iter().filter(|n| provider(n).is_none()) {
        let mark = if *name == default { '*' } else { ' ' };
        out.push_str(&format!(
            "{mark}    {name:<11} your own (providers.{name}.baseUrl)\n"
        ));
    }
    out
}

/// A provider answer: a number of the list, a name, Enter for `default`,
/// or skip. A name not in the list is taken when `custom` knows it (a
/// provider with a `baseUrl` of its own).
pub fn parse_provider(answer: &str, default: &str, custom: &[String]) -> Answer<String> {
    let answer = answer.trim();
    if answer.is_empty() {
        return parse_provider(default, "", custom);
    }
    if is_skip(answer) {
        return Answer::Skip;
    }
    if let Ok(n) = answer.parse::<usize>() {
        return match PROVIDERS.get(n.wrapping_sub(1)) {
            Some(p) => Answer::Take(p.name.to_string()),
            None => Answer::Again(format!(
                "There is no provider {n}: type a number from 1 to {}, a name, or skip.",
                PROVIDERS.len()
            )),
        };
    }
    if let Some(p) = provider(answer) {
        return Answer::Take(p.name.to_string());
    }
    if custom.iter().any(|c| c == answer) {
        return Answer::Take(answer.to_string());
    }
    Answer::Again(format!(
        "`{answer}` is not a provider gsv knows: type a number from 1 to {}, a name from \
         the list, or skip. (A server of your own: `gsv setup --provider NAME --base-url URL`.)",
        PROVIDERS.len()
    ))
}

/// What the key prompt says.
pub fn key_prompt(provider: &str, needs_key: bool, has_key: bool) -> String {
    match (has_key, needs_key) {
        (true, _) => {
            format!("API key for {provider} (hidden; Enter keeps the one set, skip skips): ")
        }
        (false, true) => format!("API key for {provider} (hidden; Enter skips this step): "),
        (false, false) => {
            format!("API key for {provider}, if it needs one (hidden; Enter for none): ")
        }
    }
}

/// A key answer.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyAnswer {
    /// A new key to check (and, once it passed, store).
    New(String),
    /// The key set, or none where none is needed: nothing sent.
    Keep,
    Skip,
}

pub fn parse_key(answer: &str, needs_key: bool, has_key: bool) -> KeyAnswer {
    let answer = answer.trim();
    match answer {
        "" if has_key || !needs_key => KeyAnswer::Keep,
        "" => KeyAnswer::Skip,
        a if a.eq_ignore_ascii_case("skip") => KeyAnswer::Skip,
        a => KeyAnswer::New(a.to_string()),
    }
}

/// The model offered: the current one while the provider stays, else the
/// provider's default (empty for a provider of one's own: it must be typed).
pub fn default_model(provider: &str, c: &Current) -> String {
    if provider == c.provider && !c.model.is_empty() {
        return c.model.clone();
    }
    self::provider(provider)
        .map(|p| p.default_model.to_string())
        .unwrap_or_default()
}

pub fn parse_model(answer: &str, default: &str) -> Answer<String> {
    match answer.trim() {
        "" if default.is_empty() => Answer::Again("Type a model id (or skip).".into()),
        "" => Answer::Take(default.to_string()),
        a if is_skip(a) => Answer::Skip,
        a if a.chars().any(char::is_whitespace) => {
            Answer::Again(format!("`{a}` is not a model id: it has spaces."))
        }
        a => Answer::Take(a.to_string()),
    }
}

/// What to ask again after a check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redo {
    /// The key was refused (or none is set).
    Key,
    /// The request was refused: most likely the model id.
    Model,
    /// The provider's own trouble (limits, errors, the network, time):
    /// the same again later.
    Again,
}

pub fn redo_after(r: &ModelCheckResult, key_asked: bool) -> Redo {
    match r.failure {
        Some(ModelCheckFailure::Auth) if key_asked => Redo::Key,
        Some(ModelCheckFailure::Unusable) if !r.has_key && key_asked => Redo::Key,
        Some(ModelCheckFailure::Invalid) | Some(ModelCheckFailure::Unusable) => Redo::Model,
        _ => Redo::Again,
    }
}

/// A failed check in plain words, the provider's own included.
pub fn failure_words(r: &ModelCheckResult) -> String {
    let p = &r.provider;
    let said = without_config_hint(r.error.as_deref().unwrap_or("no details"));
    match r.failure {
        Some(ModelCheckFailure::Auth) => format!("The key was refused: {said}"),
        Some(ModelCheckFailure::Unusable) => said.to_string(),
        Some(ModelCheckFailure::RateLimited) => format!(
            "{p} is limiting requests just now ({said}); the key may well be good: try again in a minute"
        ),
        Some(ModelCheckFailure::Server) => {
            format!("{p} had trouble answering ({said}); try again later")
        }
        Some(ModelCheckFailure::Network) => {
            let at = match r.endpoint.as_str() {
                "" => String::new(),
                e => format!(" at {e}"),
            };
            format!("Could not reach {p}{at}: {said}")
        }
        Some(ModelCheckFailure::Timeout) => format!("{p} did not answer in time: {said}"),
        Some(ModelCheckFailure::Invalid) => format!(
            "{p} refused the request for model `{}`: {said}. Is the model id right?",
            r.model
        ),
        None => format!("The check of {p} failed: {said}"),
    }
}

/// The gateway's words without the `gsv config set` hint it ends a
/// refusal with: setup keeps a key only once it passed, and asks again.
fn without_config_hint(said: &str) -> &str {
    match said.find(" Set a valid key with `gsv config set") {
        Some(at) => &said[..at],
        None => said,
    }
}

/// A passed check in words.
pub fn success_words(r: &ModelCheckResult) -> String {
    format!(
        "{} answered with {} in {} ms.",
        r.provider, r.model, r.latency_ms
    )
}

/// `text` with the key it may quote replaced by `***`: the whole
/// `secret`, and any word already masked in part (a provider's
/// `sk-****4711` still shows some of it).
pub fn redact(text: &str, secret: Option<&str>) -> String {
    let text = match secret.map(str::trim) {
        Some(s) if s.len() >= 4 => text.replace(s, "***"),
        _ => text.to_string(),
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        let core = word.trim_end_matches(['.', ',', ';', ':', ')', '"', '\'']);
        let core = core.trim_start_matches(['(', '"', '\'']);
        if core.contains("**") && core != "***" {
            out.push_str(&word.replacen(core, "***", 1));
        } else {
            out.push_str(word);
        }
        let spaces = after.len() - after.trim_start().len();
        out.push_str(&after[..spaces]);
        rest = &after[spaces..];
    }
    out
}

/// What is said before the gateway token is asked for.
pub fn token_wanted(token_sent: bool) -> &'static str {
    match token_sent {
        true => "The gateway refused that token.",
        false => "The gateway wants a token.",
    }
}

/// Why a needed key is missing in a run that does not ask.
pub fn missing_key(provider: &str) -> String {
    format!(
        "{provider} needs an API key and none is set. Give it with --api-key-env VAR (the \
         key in an environment variable) or --api-key - (read from standard input), or \
         skip this step with --skip model."
    )
}

/// The `GSV_AUTH_TOKEN` of a `.dev.vars` file (the last one set).
pub fn dev_vars_token(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("GSV_AUTH_TOKEN="))
        .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_string())
        .rfind(|v| !v.is_empty())
}

/// Whether `url` is a gateway on this machine (whose token `.dev.vars` holds).
pub fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

/// An IANA zone name from where `/etc/localtime` points
/// (`/usr/share/zoneinfo/Europe/Paris`, macOS's `/var/db/timezone/zoneinfo/…`).
pub fn zone_from_link(target: &str) -> Option<String> {
    let (_, zone) = target.rsplit_once("zoneinfo/")?;
    let zone = zone
        .strip_prefix("posix/")
        .or_else(|| zone.strip_prefix("right/"))
        .unwrap_or(zone);
    is_zone_name(zone).then(|| zone.to_string())
}

/// The system's zone: `TZ` (a name, not a POSIX rule), else
/// `/etc/timezone`, else where `/etc/localtime` points.
pub fn detect_zone(
    tz_env: Option<&str>,
    etc_timezone: Option<&str>,
    localtime_link: Option<&str>,
) -> Option<String> {
    let named = |s: &str| {
        let s = s.trim().trim_start_matches(':');
        let s = zone_from_link(s).unwrap_or_else(|| s.to_string());
        (is_zone_name(&s) && (s.contains('/') || s == "UTC")).then_some(s)
    };
    tz_env
        .and_then(named)
        .or_else(|| etc_timezone.and_then(named))
        .or_else(|| localtime_link.and_then(zone_from_link))
}

/// Looks like an IANA name: `Europe/Paris`, `America/Argentina/Salta`, `UTC`.
pub fn is_zone_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && !s.contains("..")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'))
        && s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

/// UTC by any of its names.
fn is_utc(zone: &str) -> bool {
    matches!(
        zone,
        "UTC" | "Etc/UTC" | "Etc/UCT" | "UCT" | "Etc/Zulu" | "Zulu" | "GMT" | "Etc/GMT"
    )
}

/// The zone offered, and why: the one set (anything but the UTC of the
/// default config), else the system's, else UTC.
pub fn default_zone(current: &str, detected: Option<&str>) -> (String, &'static str) {
    match detected {
        _ if !current.is_empty() && !is_utc(current) => (current.to_string(), "set now"),
        Some(d) if !is_utc(d) => (d.to_string(), "this system's"),
        _ => ("UTC".to_string(), "set now"),
    }
}

/// A zone answer; `known` says whether this system knows the name.
pub fn parse_zone(answer: &str, default: &str, known: &dyn Fn(&str) -> bool) -> Answer<String> {
    match answer.trim() {
        "" => Answer::Take(default.to_string()),
        a if is_skip(a) => Answer::Skip,
        a if is_zone_name(a) && known(a) => Answer::Take(a.to_string()),
        a => Answer::Again(format!(
            "`{a}` is not a time zone name: type one such as Europe/Paris, America/New_York \
             or UTC (or skip)."
        )),
    }
}

/// A chat app to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatApp {
    Discord,
    /// WhatsApp's Business Cloud API (a business number).
    WhatsApp,
    Telegram,
    /// The user's own WhatsApp number, linked as a device.
    WhatsAppWeb,
}

pub fn parse_app(answer: &str) -> Answer<ChatApp> {
    match answer.trim().to_ascii_lowercase().as_str() {
        "" | "none" | "no" | "n" | "skip" | "s" | "-" => Answer::Skip,
        "discord" | "d" | "1" => Answer::Take(ChatApp::Discord),
        "whatsapp" | "w" | "2" => Answer::Take(ChatApp::WhatsApp),
        "telegram" | "t" | "3" => Answer::Take(ChatApp::Telegram),
        "whatsapp-web" | "ww" | "4" => Answer::Take(ChatApp::WhatsAppWeb),
        other => Answer::Again(format!(
            "`{other}`? Type discord, telegram, whatsapp, whatsapp-web, or press Enter for none."
        )),
    }
}

/// y/yes/n/no, Enter for `default`; anything else is not understood.
pub fn parse_yes_no(answer: &str, default: bool) -> Option<bool> {
    match answer.trim().to_ascii_lowercase().as_str() {
        "" => Some(default),
        "y" | "yes" => Some(true),
        "n" | "no" | "skip" | "s" => Some(false),
        _ => None,
    }
}

/// What became of a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Done {
    /// Changed to what it says.
    Set(String),
    /// Left as it was.
    Kept(String),
    /// Not done, and why.
    Skipped(String),
    Failed(String),
}

/// The steps' outcomes, for the summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub gateway: Done,
    pub model: Done,
    /// Whether the model answered a check in this run (`None`: not checked).
    pub model_works: Option<bool>,
    pub timezone: Done,
    pub channel: Done,
    pub node: Done,
    /// The provider a run uses now (for the hint when it has no key).
    pub provider: String,
}

pub fn summary(o: &Outcome) -> String {
    let line = |name: &str, d: &Done| {
        let text = match d {
            Done::Set(t) => format!("{t} (set)"),
            Done::Kept(t) => t.clone(),
            Done::Skipped(why) => format!("skipped: {why}"),
            Done::Failed(why) => format!("FAILED: {why}"),
        };
        format!("  {name:<10} {text}\n")
    };
    let mut out = String::from("\nSetup summary:\n");
    out.push_str(&line("gateway", &o.gateway));
    out.push_str(&line("model", &o.model));
    out.push_str(&line("time zone", &o.timezone));
    out.push_str(&line("channel", &o.channel));
    out.push_str(&line("node", &o.node));
    out.push('\n');
    match o.model_works {
        Some(true) => out.push_str("Next: gsv chat \"hello\"\n"),
        None => out.push_str(
            "Next: gsv chat \"hello\"  (the model was not checked this time; \
             `gsv setup` checks it)\n",
        ),
        Some(false) => out.push_str(&format!(
            "The model did not answer its check. Run `gsv setup` again (or \
             `gsv config set apiKeys.{} <key>`), then: gsv chat \"hello\"\n",
            o.provider
        )),
    }
    out
}
