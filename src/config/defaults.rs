//! Default configuration, as one JSON document so reads can
//! deep-merge the stored overrides onto it.

use serde_json::{json, Value};

pub const DEFAULT_SYSTEM_PROMPT: &str = "You are a helpful AI assistant running inside GSV.";

pub const DEFAULT_HEARTBEAT_PROMPT: &str = "Read HEARTBEAT.md if it exists in your workspace. Follow it strictly. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK.";

pub fn default_config() -> Value {
    json!({
        "model": { "provider": "anthropic", "id": "claude-sonnet-4-20250514", "thinkingLevel": "off" },
        "apiKeys": {},
        "providers": {},
        "timeouts": { "llmMs": 300000, "toolMs": 60000, "skillProbeMaxAgeMs": 600000 },
        "tools": {
            "maxResultChars": 100000, "maxIterations": 25, "maxTransferBytes": 33554432,
            // Who may make the agent use what (src/trust/policy.rs): the
            // owner everything; other people their own memories, reminders
            // and the agent's self-reports, never a node, a workspace
            // write, the config, the logs or another session.
            "policy": {
                "owner": { "allow": ["*"], "ask": [], "deny": [] },
                "approved": {
                    "allow": ["gsv__MemoryWrite", "gsv__MemorySearch", "gsv__MemoryGet", "gsv__MemoryDelete",
                              "gsv__Cron", "who_am_i", "my_stats"],
                    "ask": [],
                    "deny": []
                },
                "group": {
                    "allow": ["gsv__MemorySearch", "gsv__MemoryGet", "gsv__Cron", "who_am_i", "my_stats"],
                    "ask": [],
                    "deny": []
                },
                "askTimeoutSeconds": 300
            }
        },
        "owner": { "identities": [] },
        "transcription": { "provider": "workers-ai" },
        "channels": {
            "whatsapp": { "dmPolicy": "pairing", "allowFrom": [], "groups": { "requireMention": true } },
            "discord": { "dmPolicy": "pairing", "allowFrom": [], "groups": { "requireMention": true } }
        },
        "systemPrompt": DEFAULT_SYSTEM_PROMPT,
        "session": {
            "defaultResetPolicy": { "mode": "daily", "atHour": 4 },
            "mainKey": "main",
            "dmScope": "main",
            "identityLinks": {},
            "shareMainWith": []
        },
        "skills": { "entries": {} },
        "agents": {
            "list": [],
            "bindings": [],
            "defaultHeartbeat": {
                "every": "30m",
                "prompt": DEFAULT_HEARTBEAT_PROMPT,
                "target": "last",
                "activeHours": { "start": "08:00", "end": "23:00" }
            }
        },
        "compaction": { "enabled": true, "reserveTokens": 20000, "keepRecentTokens": 20000, "extractMemories": true },
        "cron": { "enabled": true, "maxJobs": 200, "maxRunsPerJobHistory": 200, "maxConcurrentRuns": 4 },
        "memory": {
            "account": "default",
            "maxRetry": 5,
            "recall": { "enabled": true, "budgetTokens": 400 },
            "dream": { "enabled": true, "atHour": 3, "minScore": 60 }
        },
        "userTimezone": "UTC",
        "workspace": { "maxFileChars": 12000, "maxTotalChars": 60000, "recheckSeconds": 60 }
    })
}
