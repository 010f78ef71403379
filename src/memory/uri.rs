//! Memory node addresses: `ctx://` URIs and the object-store prefixes of
//! their directories (`accounts/{account}/…/`), one to one.
//!
//! Every segment is validated before it becomes part of a key, so a URI
//! can never name a path outside its account's prefix (no `..`, no `/`,
//! no empty segment) and a key can always be turned back into its URI.

use std::fmt;

const SCHEME: &str = "ctx://";
/// The prefix every account's nodes live under in the object store.
pub const ACCOUNTS_ROOT: &str = "accounts/";
/// Longest account, user or agent id.
const MAX_ID: usize = 128;
/// Longest slug (and skill name).
pub const MAX_SLUG: usize = 96;

/// A memory's category, as the directory spec lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Profile,
    Preferences,
    Entities,
    Events,
    Cases,
    Patterns,
    Skills,
}

impl Category {
    pub const ALL: [Category; 7] = [
        Self::Profile,
        Self::Preferences,
        Self::Entities,
        Self::Events,
        Self::Cases,
        Self::Patterns,
        Self::Skills,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Profile => "profile",
            Self::Preferences => "preferences",
            Self::Entities => "entities",
            Self::Events => "events",
            Self::Cases => "cases",
            Self::Patterns => "patterns",
            Self::Skills => "skills",
        }
    }

    pub fn parse(s: &str) -> Result<Self, UriError> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UriError::UnknownCategory(s.to_string()))
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whose memory a node is: a person's or an agent's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    User(String),
    Agent(String),
}

impl Space {
    /// The spec's `owner_space`: `user:{id}` or `agent:{id}`.
    pub fn owner(&self) -> String {
        match self {
            Self::User(u) => format!("user:{u}"),
            Self::Agent(a) => format!("agent:{a}"),
        }
    }

    fn segment(&self) -> (&'static str, &str) {
        match self {
            Self::User(u) => ("users", u),
            Self::Agent(a) => ("agents", a),
        }
    }
}

/// What a node is within its space.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    Memory {
        category: Category,
        slug: String,
    },
    /// A skill the agent learned (agent space only).
    Skill {
        name: String,
    },
}

/// One node's address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeUri {
    pub account: String,
    pub space: Space,
    pub kind: NodeKind,
}

/// A URI, key or segment that does not name a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UriError {
    NotCtx(String),
    Shape(String),
    BadSegment { what: &'static str, value: String },
    UnknownCategory(String),
    SkillInUserSpace(String),
}

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotCtx(s) => write!(f, "not a ctx:// URI: {s:?}"),
            Self::Shape(s) => write!(
                f,
                "{s:?} is not ctx://ACCOUNT/users/USER/memories/CATEGORY/SLUG, \
                 ctx://ACCOUNT/agents/AGENT/memories/CATEGORY/SLUG or \
                 ctx://ACCOUNT/agents/AGENT/skills/NAME"
            ),
            Self::BadSegment { what, value } => write!(
                f,
                "invalid {what} {value:?}: use letters, digits and - _ . (ids may also hold + : @), \
                 not . or .. alone, at most {} characters",
                if *what == "slug" { MAX_SLUG } else { MAX_ID }
            ),
            Self::UnknownCategory(c) => write!(
                f,
                "unknown category {c:?}: one of {}",
                Category::ALL.map(Category::as_str).join(", ")
            ),
            Self::SkillInUserSpace(s) => write!(f, "skills belong to agents, not users: {s:?}"),
        }
    }
}

impl std::error::Error for UriError {}

/// An account, user or agent id: letters, digits and `-_.+:@` (phone
/// numbers and `discord:123` peers are user ids), never `.` or `..`.
pub fn check_id(what: &'static str, s: &str) -> Result<(), UriError> {
    let ok = !s.is_empty()
        && s.len() <= MAX_ID
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+:@".contains(c));
    match ok {
        true => Ok(()),
        false => Err(UriError::BadSegment {
            what,
            value: s.to_string(),
        }),
    }
}

/// A slug or skill name: URL-safe (`A-Za-z0-9-_.`), not starting with a
/// dot (the node's own files do), at most [`MAX_SLUG`] characters.
pub fn check_slug(s: &str) -> Result<(), UriError> {
    let ok = !s.is_empty()
        && s.len() <= MAX_SLUG
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    match ok {
        true => Ok(()),
        false => Err(UriError::BadSegment {
            what: "slug",
            value: s.to_string(),
        }),
    }
}

/// A slug made from a title: lower case, runs of anything else as one
/// `_`, cut at [`MAX_SLUG`]; `None` when nothing usable is left.
pub fn slugify(title: &str) -> Option<String> {
    let mut slug = String::new();
    for c in title.chars() {
        match c.is_ascii_alphanumeric() {
            true => slug.push(c.to_ascii_lowercase()),
            false if !slug.is_empty() && !slug.ends_with('_') => slug.push('_'),
            false => {}
        }
        if slug.len() >= MAX_SLUG {
            break;
        }
    }
    let slug = slug.trim_end_matches('_').to_string();
    (!slug.is_empty()).then_some(slug)
}

impl NodeUri {
    pub fn memory(
        account: &str,
        space: Space,
        category: Category,
        slug: &str,
    ) -> Result<Self, UriError> {
        let uri = Self {
            account: account.to_string(),
            space,
            kind: NodeKind::Memory {
                category,
                slug: slug.to_string(),
            },
        };
        uri.validate()?;
        Ok(uri)
    }

    fn validate(&self) -> Result<(), UriError> {
        check_id("account", &self.account)?;
        match &self.space {
            Space::User(u) => check_id("user", u)?,
            Space::Agent(a) => check_id("agent", a)?,
        }
        match (&self.kind, &self.space) {
            (NodeKind::Memory { slug, .. }, _) => check_slug(slug),
            (NodeKind::Skill { .. }, Space::User(_)) => {
                Err(UriError::SkillInUserSpace(self.to_string()))
            }
            (NodeKind::Skill { name }, Space::Agent(_)) => check_slug(name),
        }
    }

    /// Parses `ctx://…`, refusing anything that is not exactly one node.
    pub fn parse(s: &str) -> Result<Self, UriError> {
        let rest = s
            .strip_prefix(SCHEME)
            .ok_or_else(|| UriError::NotCtx(s.to_string()))?;
        Self::from_segments(s, rest.split('/').collect())
    }

    /// The node whose directory is `prefix` (`accounts/…/slug/`, or any key
    /// inside it: the node's own files are cut off).
    pub fn from_key(key: &str) -> Result<Self, UriError> {
        let rest = key
            .strip_prefix(ACCOUNTS_ROOT)
            .ok_or_else(|| UriError::Shape(key.to_string()))?;
        let parts: Vec<&str> = rest.split('/').collect();
        let len = match parts.get(3) {
            Some(&"memories") => 6,
            _ => 5,
        };
        if parts.len() < len {
            return Err(UriError::Shape(key.to_string()));
        }
        Self::from_segments(key, parts[..len].to_vec())
    }

    fn from_segments(whole: &str, parts: Vec<&str>) -> Result<Self, UriError> {
        let shape = || UriError::Shape(whole.to_string());
        let (account, space, kind) = match parts.as_slice() {
            [account, space, id, "memories", category, slug] => (
                account,
                space_of(space, id).ok_or_else(shape)?,
                NodeKind::Memory {
                    category: Category::parse(category)?,
                    slug: slug.to_string(),
                },
            ),
            [account, "agents", id, "skills", name] => (
                account,
                Space::Agent(id.to_string()),
                NodeKind::Skill {
                    name: name.to_string(),
                },
            ),
            [_, "users", _, "skills", _] => {
                return Err(UriError::SkillInUserSpace(whole.to_string()))
            }
            _ => return Err(shape()),
        };
        let uri = Self {
            account: account.to_string(),
            space,
            kind,
        };
        uri.validate()?;
        Ok(uri)
    }

    /// The node's directory in the object store, ending in `/`.
    pub fn prefix(&self) -> String {
        format!("{ACCOUNTS_ROOT}{}/", self.path())
    }

    /// The key of one of the node's files.
    pub fn key(&self, file: &str) -> String {
        format!("{}{file}", self.prefix())
    }

    fn path(&self) -> String {
        let (space, id) = self.space.segment();
        match &self.kind {
            NodeKind::Memory { category, slug } => {
                format!("{}/{space}/{id}/memories/{category}/{slug}", self.account)
            }
            NodeKind::Skill { name } => format!("{}/{space}/{id}/skills/{name}", self.account),
        }
    }

    pub fn category(&self) -> Category {
        match &self.kind {
            NodeKind::Memory { category, .. } => *category,
            NodeKind::Skill { .. } => Category::Skills,
        }
    }

    /// The slug, or the skill's name.
    pub fn slug(&self) -> &str {
        match &self.kind {
            NodeKind::Memory { slug, .. } => slug,
            NodeKind::Skill { name } => name,
        }
    }
}

fn space_of(kind: &str, id: &str) -> Option<Space> {
    match kind {
        "users" => Some(Space::User(id.to_string())),
        "agents" => Some(Space::Agent(id.to_string())),
        _ => None,
    }
}

impl fmt::Display for NodeUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}", self.path())
    }
}

/// The prefix of everything one space holds in an account.
pub fn space_prefix(account: &str, space: &Space) -> String {
    let (kind, id) = space.segment();
    format!("{ACCOUNTS_ROOT}{account}/{kind}/{id}/")
}

/// The prefix of one account.
pub fn account_prefix(account: &str) -> String {
    format!("{ACCOUNTS_ROOT}{account}/")
}
