//! IDENTITY.md: five optional persona fields from a markdown bullet list.

use serde::Serialize;

/// The persona facts of an agent. Every field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AgentIdentity {
    /// What the agent is called.
    pub name: Option<String>,
    /// What kind of being it is.
    pub creature: Option<String>,
    /// How it comes across.
    pub vibe: Option<String>,
    /// Its signature emoji.
    pub emoji: Option<String>,
    /// An image URL.
    pub avatar: Option<String>,
}

impl AgentIdentity {
    /// Reads the fields from lines such as `- **Name:** Kate`. Accepted
    /// variants: `-`, `*` or `+` bullets or none; the label in bold with
    /// the colon inside (`**Name:**`) or outside (`**Name**:`) or plain
    /// (`Name:`); any letter case. Values wrapped in `_…_` or `*…*` are
    /// unwrapped; template placeholders in parentheses (`_(pick
    /// something)_`) and empty values are skipped. The first value of a
    /// field wins.
    pub fn parse(markdown: &str) -> Self {
        let mut id = Self::default();
        for line in markdown.lines() {
            let Some((key, value)) = field(line) else {
                continue;
            };
            let slot = match key.to_ascii_lowercase().as_str() {
                "name" => &mut id.name,
                "creature" => &mut id.creature,
                "vibe" => &mut id.vibe,
                "emoji" => &mut id.emoji,
                "avatar" => &mut id.avatar,
                _ => continue,
            };
            if slot.is_none() {
                *slot = clean(value);
            }
        }
        id
    }

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The one-line rendering: `name=…, emoji=…,
    /// vibe=…`, only the fields that are set, in that order. `None` when
    /// none of the three is set.
    pub fn render_line(&self) -> Option<String> {
        let parts: Vec<String> = [
            ("name", &self.name),
            ("emoji", &self.emoji),
            ("vibe", &self.vibe),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
        .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// `(label, raw value)` of a `label: value` line, bullet and bold removed.
fn field(line: &str) -> Option<(&str, &str)> {
    let s = line.trim();
    let s = ["- ", "* ", "+ "]
        .iter()
        .find_map(|m| s.strip_prefix(m))
        .unwrap_or(s)
        .trim_start();
    if let Some(bold) = s.strip_prefix("**") {
        let (label, rest) = bold.split_once("**")?;
        return match label.strip_suffix(':') {
            Some(label) => Some((label.trim(), rest)),
            None => Some((label.trim(), rest.trim_start().strip_prefix(':')?)),
        };
    }
    let (label, rest) = s.split_once(':')?;
    let label = label.trim();
    (!label.is_empty() && label.bytes().all(|b| b.is_ascii_alphabetic())).then_some((label, rest))
}

fn clean(raw: &str) -> Option<String> {
    let mut v = raw.trim();
    for wrap in ["_", "*"] {
        if v.len() >= 2 && v.starts_with(wrap) && v.ends_with(wrap) {
            v = v[1..v.len() - 1].trim();
        }
    }
    let placeholder = v.starts_with('(') && v.ends_with(')');
    (!v.is_empty() && !placeholder).then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn parses_every_field() {
        let md = "# IDENTITY\n\n- **Name:** Kate\n- **Creature:** octopus\n- **Vibe:** warm but sharp\n- **Emoji:** 🐙\n- **Avatar:** https://example.com/kate.png\n";
        let id = AgentIdentity::parse(md);
        assert_eq!(
            id,
            AgentIdentity {
                name: some("Kate"),
                creature: some("octopus"),
                vibe: some("warm but sharp"),
                emoji: some("🐙"),
                avatar: some("https://example.com/kate.png"),
            }
        );
        assert_eq!(
            id.render_line(),
            some("name=Kate, emoji=🐙, vibe=warm but sharp")
        );
    }

    #[test]
    fn variants_and_placeholders() {
        let md = "* **name**: Rook\n+ Vibe: _dry_\n**Emoji:** _(pick one)_\n- **Creature:**\n- Avatar: (none yet)\n- **Name:** Second\n- Note: not a field\n- a list item with a colon: ignored\n";
        let id = AgentIdentity::parse(md);
        assert_eq!(
            id,
            AgentIdentity {
                name: some("Rook"),
                creature: None,
                vibe: some("dry"),
                emoji: None,
                avatar: None,
            }
        );
        assert_eq!(id.render_line(), some("name=Rook, vibe=dry"));
    }

    #[test]
    fn template_and_empty_render_nothing() {
        let id = AgentIdentity::parse(
            "- **Name:** _(pick something)_\n- **Vibe:** *(how you come across)*\n",
        );
        assert!(id.is_empty());
        assert_eq!(id.render_line(), None);
        let only_creature = AgentIdentity::parse("- **Creature:** fox");
        assert_eq!(only_creature.render_line(), None);
    }
}
