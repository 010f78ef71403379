//! The shape of the configuration: which paths exist and what type each
//! holds, so `config.set` refuses a wrong value with a message that names
//! the path and the expected type instead of storing it.

use serde_json::Value;

#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Str,
    /// An integer within bounds (inclusive).
    Int(i64, i64),
    Bool,
    OneOf(&'static [&'static str]),
    StrList,
    /// A JSON array of objects, checked only for being an array.
    List,
    /// Fixed fields.
    Obj(&'static [(&'static str, Ty)]),
    /// Any key, every value of the given type.
    Map(&'static Ty),
    /// A free-form object (validated by the feature that uses it).
    AnyObj,
}

impl Ty {
    pub fn describe(&self) -> String {
        match self {
            Ty::Str => "a string".into(),
            Ty::Int(lo, hi) if *hi == i64::MAX => format!("an integer ≥ {lo}"),
            Ty::Int(lo, hi) => format!("an integer from {lo} to {hi}"),
            Ty::Bool => "true or false".into(),
            Ty::OneOf(opts) => format!("one of {}", opts.join(", ")),
            Ty::StrList => "a list of strings".into(),
            Ty::List => "a list".into(),
            Ty::Obj(_) | Ty::Map(_) | Ty::AnyObj => "an object".into(),
        }
    }
}

const POS: Ty = Ty::Int(1, i64::MAX);
const NONNEG: Ty = Ty::Int(0, i64::MAX);
const THINK_LEVELS: &[&str] = &[
    "off", "none", "minimal", "min", "low", "medium", "med", "high", "xhigh", "max",
];

const MODEL: Ty = Ty::Obj(&[
    ("provider", Ty::Str),
    ("id", Ty::Str),
    ("thinkingLevel", Ty::OneOf(THINK_LEVELS)),
    ("maxTokens", POS),
    // `provider/id` or `id`, in order (session::fallback).
    ("fallbacks", Ty::StrList),
]);
const PROVIDER: Ty = Ty::Obj(&[
    ("baseUrl", Ty::Str),
    (
        "api",
        Ty::OneOf(&[
            "openai-completions",
            "openai-responses",
            "anthropic-messages",
            "workers-ai",
        ]),
    ),
    ("contextWindow", POS),
    ("cacheTtl", Ty::OneOf(&["5m", "1h", "off"])),
    // Per model id prefix: {input, output, cacheRead?, cacheWrite?} per
    // million tokens (llm::prices).
    ("prices", Ty::AnyObj),
]);
const TIMEOUTS: Ty = Ty::Obj(&[
    ("llmMs", Ty::Int(1000, 3_600_000)),
    ("toolMs", Ty::Int(1000, 3_600_000)),
    ("skillProbeMaxAgeMs", Ty::Int(1000, 86_400_000)),
]);
const CHANNEL: Ty = Ty::Obj(&[
    (
        "dmPolicy",
        Ty::OneOf(&["open", "allowlist", "pairing", "disabled"]),
    ),
    ("allowFrom", Ty::StrList),
    ("groups", Ty::Obj(&[("requireMention", Ty::Bool)])),
]);
const RESET_POLICY: Ty = Ty::Obj(&[
    ("mode", Ty::OneOf(&["manual", "daily", "idle"])),
    ("atHour", Ty::Int(0, 23)),
    ("idleMinutes", POS),
]);
const SESSION: Ty = Ty::Obj(&[
    ("defaultResetPolicy", RESET_POLICY),
    ("mainKey", Ty::Str),
    (
        "dmScope",
        Ty::OneOf(&[
            "main",
            "per-peer",
            "per-channel-peer",
            "per-account-channel-peer",
        ]),
    ),
    ("identityLinks", Ty::Map(&Ty::StrList)),
    // People who are not the owner but whose DMs the owner wants in the
    // main session (identities as in `owner.identities`).
    ("shareMainWith", Ty::StrList),
]);
const TOOL_RULES: Ty = Ty::Obj(&[
    ("allow", Ty::StrList),
    ("ask", Ty::StrList),
    ("deny", Ty::StrList),
]);
const AGENTS: Ty = Ty::Obj(&[
    ("list", Ty::List),
    ("bindings", Ty::List),
    ("defaultHeartbeat", Ty::AnyObj),
]);
const COMPACTION: Ty = Ty::Obj(&[
    ("enabled", Ty::Bool),
    ("reserveTokens", NONNEG),
    ("keepRecentTokens", NONNEG),
    ("extractMemories", Ty::Bool),
]);
const CRON: Ty = Ty::Obj(&[
    ("enabled", Ty::Bool),
    ("maxJobs", POS),
    ("maxRunsPerJobHistory", Ty::Int(1, 50_000)),
    ("maxConcurrentRuns", POS),
]);

const MEMORY: Ty = Ty::Obj(&[
    ("account", Ty::Str),
    ("maxRetry", Ty::Int(1, 100)),
    (
        "recall",
        Ty::Obj(&[("enabled", Ty::Bool), ("budgetTokens", Ty::Int(0, 10_000))]),
    ),
    (
        "dream",
        Ty::Obj(&[
            ("enabled", Ty::Bool),
            ("atHour", Ty::Int(0, 23)),
            ("minScore", Ty::Int(0, 100)),
        ]),
    ),
    (
        "embeddings",
        Ty::Obj(&[("url", Ty::Str), ("model", Ty::Str), ("apiKey", Ty::Str)]),
    ),
]);

pub const ROOT: Ty = Ty::Obj(&[
    ("model", MODEL),
    ("apiKeys", Ty::Map(&Ty::Str)),
    ("providers", Ty::Map(&PROVIDER)),
    ("timeouts", TIMEOUTS),
    (
        "tools",
        Ty::Obj(&[
            ("maxResultChars", Ty::Int(1000, 10_000_000)),
            ("maxIterations", Ty::Int(1, 1000)),
            // The gateway holds a file bound for R2 in memory: stay far below 128 MB.
            ("maxTransferBytes", Ty::Int(1, 64 * 1024 * 1024)),
            (
                "policy",
                Ty::Obj(&[
                    ("owner", TOOL_RULES),
                    ("approved", TOOL_RULES),
                    ("group", TOOL_RULES),
                    // How long a call waits for the owner before it is denied.
                    ("askTimeoutSeconds", Ty::Int(10, 86_400)),
                ]),
            ),
        ]),
    ),
    // The owner's own chat identities (`discord:81234`, `+4915100000`, or
    // the name of an `session.identityLinks` entry).
    ("owner", Ty::Obj(&[("identities", Ty::StrList)])),
    (
        "transcription",
        Ty::Obj(&[
            ("provider", Ty::OneOf(&["workers-ai", "openai"])),
            // An OpenAI-compatible /audio/transcriptions endpoint.
            ("baseUrl", Ty::Str),
            ("apiKey", Ty::Str),
            ("model", Ty::Str),
        ]),
    ),
    ("channels", Ty::Map(&CHANNEL)),
    ("systemPrompt", Ty::Str),
    ("session", SESSION),
    ("skills", Ty::Obj(&[("entries", Ty::Map(&Ty::AnyObj))])),
    ("agents", AGENTS),
    ("compaction", COMPACTION),
    ("cron", CRON),
    ("memory", MEMORY),
    ("userTimezone", Ty::Str),
    (
        "workspace",
        Ty::Obj(&[
            ("maxFileChars", POS),
            ("maxTotalChars", POS),
            ("recheckSeconds", NONNEG),
        ]),
    ),
]);

/// The type expected at `segments`, or `None` when no such path exists.
pub fn lookup(segments: &[&str]) -> Option<Ty> {
    let mut ty = ROOT;
    for seg in segments {
        ty = match ty {
            Ty::Obj(fields) => fields.iter().find(|(k, _)| k == seg).map(|(_, t)| *t)?,
            Ty::Map(inner) => *inner,
            Ty::AnyObj => Ty::AnyObj,
            _ => return None,
        };
    }
    Some(ty)
}

/// Why a value does not fit the schema; it names the offending path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaError {
    /// The value at `path` is not of the type `expected` describes.
    WrongType { path: String, expected: String },
    /// `path` is not a setting.
    Unknown { path: String },
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::WrongType { path, expected } => write!(f, "{path} must be {expected}"),
            SchemaError::Unknown { path } => write!(f, "{path} is not a known setting"),
        }
    }
}

impl std::error::Error for SchemaError {}

/// Checks `value` against `ty`; the error names the offending path.
pub fn check(path: &str, ty: Ty, value: &Value) -> Result<(), SchemaError> {
    let wrong = || {
        Err(SchemaError::WrongType {
            path: path.to_string(),
            expected: ty.describe(),
        })
    };
    match ty {
        Ty::Str => value.is_string().then_some(()).map_or_else(wrong, Ok),
        Ty::Int(lo, hi) => match value.as_i64() {
            Some(n) if n >= lo && n <= hi => Ok(()),
            _ => wrong(),
        },
        Ty::Bool => value.is_boolean().then_some(()).map_or_else(wrong, Ok),
        Ty::OneOf(opts) => match value.as_str() {
            Some(s) if opts.contains(&s) => Ok(()),
            _ => wrong(),
        },
        Ty::StrList => match value.as_array() {
            Some(items) if items.iter().all(Value::is_string) => Ok(()),
            _ => wrong(),
        },
        Ty::List => value.is_array().then_some(()).map_or_else(wrong, Ok),
        Ty::AnyObj => value.is_object().then_some(()).map_or_else(wrong, Ok),
        Ty::Obj(fields) => {
            let Some(map) = value.as_object() else {
                return wrong();
            };
            for (key, v) in map {
                let Some((_, field_ty)) = fields.iter().find(|(k, _)| k == key) else {
                    return Err(SchemaError::Unknown {
                        path: format!("{path}.{key}"),
                    });
                };
                check(&format!("{path}.{key}"), *field_ty, v)?;
            }
            Ok(())
        }
        Ty::Map(inner) => {
            let Some(map) = value.as_object() else {
                return wrong();
            };
            for (key, v) in map {
                check(&format!("{path}.{key}"), *inner, v)?;
            }
            Ok(())
        }
    }
}
