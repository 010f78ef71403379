//! `gsv memory search|get|put|rm|status|repair`: the agent's long-term
//! memory (categorized memory nodes in R2, searched through the index).

use super::{print_answer, GatewayTarget};
use anyhow::Result;
use clap::Subcommand;
use gsv_protocol::*;

#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Find memories by keyword (and meaning, with embeddings configured)
    #[command(after_help = "\
Examples:
  gsv memory search coffee
  gsv memory search \"where does alice work\" --category profile --user alice")]
    Search {
        /// What to look for
        query: Vec<String>,
        /// Only this category (profile, preferences, entities, events, cases, patterns, skills)
        #[arg(long)]
        category: Option<String>,
        /// Only this person's memories
        #[arg(long)]
        user: Option<String>,
        /// The agent (default main)
        #[arg(long)]
        agent: Option<String>,
        #[arg(short = 'n', long, default_value_t = 10)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Print one memory (its content; --level 0 abstract, 1 overview)
    Get {
        /// ctx://ACCOUNT/users/USER/memories/CATEGORY/SLUG (or agents/AGENT/…)
        uri: String,
        #[arg(long)]
        level: Option<u8>,
        #[arg(long)]
        json: bool,
    },
    /// Write a memory (a new one, or a new version of the same slug)
    #[command(after_help = "\
Examples:
  gsv memory put preferences \"Alice drinks her coffee black\" --title coffee
  gsv memory put cases \"Deploys fail when…\" --agent-space --tag deploy")]
    Put {
        /// profile, preferences, entities, events, cases, patterns or skills
        category: String,
        /// The memory itself (markdown)
        content: String,
        #[arg(long)]
        title: Option<String>,
        #[arg(long)]
        slug: Option<String>,
        /// The one-line abstract (at most 100 characters; default: the first line)
        #[arg(long = "abstract")]
        abstract_text: Option<String>,
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// About this person (default: you, the owner)
        #[arg(long)]
        user: Option<String>,
        /// The agent's own memory instead of a person's
        #[arg(long)]
        agent_space: bool,
        #[arg(long)]
        agent: Option<String>,
    },
    /// Delete a memory
    Rm { uri: String },
    /// Nodes, events waiting, dead letters, alerts, last repair and dream
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Run the repair job now (it also runs every night)
    Repair {
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(target: &GatewayTarget, command: MemoryCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        MemoryCommand::Search {
            query,
            category,
            user,
            agent,
            limit,
            json,
        } => {
            let params = MemorySearchParams {
                query: query.join(" "),
                category,
                user,
                agent_id: agent,
                limit: Some(limit),
                ..Default::default()
            };
            print_answer::<method::MemorySearch>(&conn, &params, json, render_hits).await?;
        }
        MemoryCommand::Get { uri, level, json } => {
            let params = MemoryGetParams {
                uri: uri.clone(),
                level,
            };
            let render = |r: &MemoryGetResult| match &r.node {
                Some(n) => render_node(n),
                None => format!("No memory {uri}\n"),
            };
            print_answer::<method::MemoryGet>(&conn, &params, json, render).await?;
        }
        MemoryCommand::Put {
            category,
            content,
            title,
            slug,
            abstract_text,
            tags,
            user,
            agent_space,
            agent,
        } => {
            let params = MemoryPutParams {
                category,
                content,
                title,
                slug,
                abstract_text,
                tags,
                user,
                agent_id: agent,
                space: Some(match agent_space {
                    true => MemoryScope::Agent,
                    false => MemoryScope::User,
                }),
                ..Default::default()
            };
            let r = conn.call::<method::MemoryPut>(&params).await?;
            println!("Saved {} (version {})", r.uri, r.version);
        }
        MemoryCommand::Rm { uri } => {
            let r = conn
                .call::<method::MemoryDelete>(&MemoryDeleteParams { uri: uri.clone() })
                .await?;
            match r.deleted {
                true => println!("Deleted {uri}"),
                false => println!("No memory {uri}"),
            }
        }
        MemoryCommand::Status { json } => {
            print_answer::<method::MemoryStatus>(&conn, &NoParams, json, render_status).await?;
        }
        MemoryCommand::Repair { json } => {
            print_answer::<method::MemoryRepair>(&conn, &NoParams, json, render_repair).await?;
        }
    }
    Ok(())
}

pub fn render_hits(r: &MemorySearchResult) -> String {
    if r.hits.is_empty() {
        return format!("No memory matches ({} search).\n", r.mode);
    }
    let mut out = String::new();
    for h in &r.hits {
        out.push_str(&format!(
            "{}  [{}] {}\n    {}\n",
            h.uri, h.category, h.abstract_text, h.snippet
        ));
    }
    out.push_str(&format!(
        "{} found ({} search, {:.1} ms)\n",
        r.hits.len(),
        r.mode,
        r.took_ms
    ));
    out
}

pub fn render_node(n: &MemoryNode) -> String {
    let mut out = format!(
        "{}\n[{}] {} · version {} · updated {}{}\n\n{}\n",
        n.uri,
        n.category,
        n.owner_space,
        n.version,
        n.updated_at,
        match n.tags.is_empty() {
            true => String::new(),
            false => format!(" · tags {}", n.tags.join(", ")),
        },
        n.text.trim_end()
    );
    for r in &n.relations {
        out.push_str(&format!(
            "→ {} {} ({:.2}) {}\n",
            r.relation_type, r.to_uri, r.weight, r.reason
        ));
    }
    out
}

pub fn render_status(s: &MemoryStatusResult) -> String {
    let mut out = format!(
        "Account        {}\nMemories       {}\nSearch         {}\nEvents waiting {}\nDead letters   {}\nRecalls (7 d)  {}\nPromoted       {}\n",
        s.account, s.nodes, s.search_mode, s.pending_events, s.dead_lettered, s.recall_events_7d, s.memories_promoted
    );
    let c = &s.by_status;
    out.push_str(&format!(
        "By status      {} active, {} pending, {} broken\n",
        c.active, c.pending, c.broken
    ));
    let when = |ms: Option<i64>| ms.map_or("never".to_string(), dates::iso_utc_seconds);
    out.push_str(&format!(
        "Last repair    {}\nLast dream     {}\n",
        when(s.last_repair_at_ms),
        when(s.last_dream_at_ms)
    ));
    for b in &s.broken {
        out.push_str(&format!(
            "! {}: BROKEN, missing {} (restore them, then `gsv memory repair`)\n",
            b.uri,
            b.missing.join(", ")
        ));
    }
    // The last repair's alerts, but those the BROKEN list already says.
    let listed = |a: &str| {
        s.broken
            .iter()
            .any(|b| a.starts_with(&format!("{}: BROKEN", b.uri)))
    };
    for a in s.alerts.iter().filter(|a| !listed(a)) {
        out.push_str(&format!("! {a}\n"));
    }
    out
}

pub fn render_repair(r: &MemoryRepairResult) -> String {
    let mut out = format!(
        "Scanned {} memories in {} listing pages ({} ms): {} recreated, {} activated, {} marked broken, {} restored, {} deletes finished, {} events queued\n",
        r.nodes_scanned,
        r.list_pages,
        r.took_ms,
        r.recreated.len(),
        r.activated.len(),
        r.marked_broken.len(),
        r.restored.len(),
        r.deletes_finished.len(),
        r.events_queued
    );
    for a in &r.alerts {
        out.push_str(&format!("! {a}\n"));
    }
    out
}
