// Long-term memory: the index's state (memory.status), search
// (memory.search), one memory read whole (memory.get at level 2) and
// deleted (memory.delete), the repair job run now (memory.repair), and a
// memory written by hand (memory.put). Content is markdown from the model
// or a person, so it goes through the chat's sanitizing renderer.

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import { renderMarkdown } from "../markdown";
import type { MemoryHit, MemoryRepairResult, MemoryStatusResult } from "../protocol/generated";
import { Card, ErrorNote, type Loaded, fmtAgo, fmtDuration, fmtTime, useAction, useClient, useLoad } from "../ui";

/** The categories the gateway accepts (src/memory: one of these or a refusal). */
const CATEGORIES = ["profile", "preferences", "entities", "events", "cases", "patterns", "skills"] as const;

export function MemoryView({ connected }: ViewProps) {
  const client = useClient();
  const status = useLoad(() => client.call("memory.status"), [client, connected], connected);
  const [draft, setDraft] = useState("");
  const [query, setQuery] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const hits = useLoad(
    () => (query ? client.call("memory.search", { query, scope: "all", limit: 30 }) : Promise.resolve(null)),
    [client, query, connected],
    connected,
  );
  const changed = () => {
    status.reload();
    hits.reload();
  };
  return (
    <div class="stack">
      <Status status={status} onRepaired={changed} />
      <div class="split">
        <Card title="Search">
          <form
            class="row"
            id="memory-search"
            onSubmit={(e) => {
              e.preventDefault();
              const q = draft.trim();
              if (q === query) hits.reload();
              setQuery(q);
              setOpen(null);
            }}
          >
            <input
              name="query"
              type="search"
              placeholder="coffee, Porto, deadlines…"
              value={draft}
              onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
            />
            <button type="submit" disabled={!draft.trim()}>
              Search
            </button>
          </form>
          <ErrorNote error={hits.error} />
          {hits.data && (
            <p class="muted small" id="memory-search-meta">
              {hits.data.hits.length} found ({hits.data.mode} search, {Math.round(hits.data.tookMs)} ms)
            </p>
          )}
          <ul class="list" id="memory-hits">
            {(hits.data?.hits ?? []).map((h) => (
              <Hit key={h.uri} hit={h} selected={open === h.uri} onOpen={() => setOpen(h.uri)} />
            ))}
          </ul>
        </Card>
        {open && (
          <Detail
            key={open}
            uri={open}
            onDeleted={() => {
              setOpen(null);
              changed();
            }}
          />
        )}
      </div>
      <Remember onSaved={changed} />
    </div>
  );
}

function Status({ status, onRepaired }: { status: Loaded<MemoryStatusResult>; onRepaired: () => void }) {
  const client = useClient();
  const [act, state] = useAction();
  const [report, setReport] = useState<MemoryRepairResult | null>(null);
  const s = status.data;
  return (
    <Card
      title="Memory"
      actions={
        <>
          <button
            class="secondary"
            id="memory-repair"
            disabled={state.busy}
            onClick={() =>
              void act(async () => {
                setReport(await client.call("memory.repair"));
                onRepaired();
              })
            }
          >
            Run repair now
          </button>
          <button class="secondary" onClick={status.reload}>
            Refresh
          </button>
        </>
      }
    >
      <ErrorNote error={status.error ?? state.error} />
      {s && (
        <dl class="facts" id="memory-status">
          <dt>Account</dt>
          <dd class="mono">{s.account}</dd>
          <dt>Memories</dt>
          <dd data-field="nodes">{s.nodes}</dd>
          <dt>By status</dt>
          <dd data-field="byStatus">
            {s.byStatus.active} active, {s.byStatus.pending} pending, {s.byStatus.broken} broken
          </dd>
          <dt>Search</dt>
          <dd>{s.searchMode === "hybrid" ? "hybrid (keywords and embeddings)" : "keyword (BM25)"}</dd>
          <dt>Index updates</dt>
          <dd>
            {s.pendingEvents} pending, {s.deadLettered} failed for good
          </dd>
          <dt>Last 7 days</dt>
          <dd>
            {s.recallEvents7d} recalls, {s.memoriesPromoted} promoted to MEMORY.md
          </dd>
          <dt>Last repair</dt>
          <dd data-field="lastRepair">{s.lastRepairAtMs ? `${fmtTime(s.lastRepairAtMs)} (${fmtAgo(s.lastRepairAtMs)})` : "never"}</dd>
          <dt>Last dream</dt>
          <dd>{s.lastDreamAtMs ? `${fmtTime(s.lastDreamAtMs)} (${fmtAgo(s.lastDreamAtMs)})` : "never"}</dd>
        </dl>
      )}
      {s && s.broken.length > 0 && (
        <ul class="alerts" id="memory-broken" role="alert">
          {s.broken.map((b) => (
            <li key={b.uri} class="error">
              <span class="mono">{b.uri}</span>: BROKEN, missing {b.missing.join(", ")} (restore them, then run repair)
            </li>
          ))}
        </ul>
      )}
      {s && s.alerts.length > 0 && (
        <ul class="alerts" id="memory-alerts" role="alert">
          {s.alerts.map((a) => (
            <li key={a} class="error">
              {a}
            </li>
          ))}
        </ul>
      )}
      {report && <RepairReport report={report} />}
    </Card>
  );
}

function RepairReport({ report: r }: { report: MemoryRepairResult }) {
  const lists: [string, string[]][] = [
    ["Recreated", r.recreated],
    ["Activated", r.activated],
    ["Marked broken", r.markedBroken],
    ["Restored", r.restored],
    ["Deletes finished", r.deletesFinished],
    ["Alerts", r.alerts],
  ];
  return (
    <div class="ok-note" id="memory-repair-report">
      <p>
        Repair scanned {r.nodesScanned} memories ({r.listPages} listing pages) in {fmtDuration(r.tookMs)}; queued{" "}
        {r.eventsQueued} index updates.
      </p>
      {lists
        .filter(([, l]) => l.length > 0)
        .map(([name, l]) => (
          <p key={name} class="small">
            {name}: <span class="mono wrap-any">{l.join(", ")}</span>
          </p>
        ))}
    </div>
  );
}

function Hit({ hit, selected, onOpen }: { hit: MemoryHit; selected: boolean; onOpen: () => void }) {
  return (
    <li class={selected ? "selected" : ""}>
      <button class="list-item memory-hit" data-uri={hit.uri} onClick={onOpen}>
        <span>
          <span class="pill">{hit.category}</span> <strong>{hit.abstract}</strong>
        </span>
        {hit.snippet && hit.snippet !== hit.abstract && <span class="small">{hit.snippet}</span>}
        <span class="muted small mono wrap-any">{hit.uri}</span>
      </button>
    </li>
  );
}

function Detail({ uri, onDeleted }: { uri: string; onDeleted: () => void }) {
  const client = useClient();
  const got = useLoad(() => client.call("memory.get", { uri, level: 2 }), [client, uri]);
  const [act, state] = useAction();
  const node = got.data?.node;
  return (
    <Card
      title="Memory"
      actions={
        node && (
          <button
            class="danger"
            id="memory-delete"
            disabled={state.busy}
            onClick={() =>
              void act(async () => {
                if (!confirm(`Delete ${uri}?`)) return;
                await client.call("memory.delete", { uri });
                onDeleted();
              })
            }
          >
            Delete
          </button>
        )
      }
    >
      <div id="memory-detail">
        <p class="mono small wrap-any">{uri}</p>
        <ErrorNote error={got.error ?? state.error} />
        {got.data && !node && <p class="muted">No such memory (it was deleted).</p>}
        {node && (
          <>
            <p class="muted small">
              <span class="pill">{node.category}</span> {node.ownerSpace} · version {node.version} · updated{" "}
              {fmtTime(Date.parse(node.updatedAt))}
              {node.tags.length > 0 && <> · tags {node.tags.join(", ")}</>}
            </p>
            <div class="md memory-text" dangerouslySetInnerHTML={{ __html: renderMarkdown(node.text) }} />
            {node.relations.length > 0 && (
              <>
                <h3>Relations</h3>
                <ul class="small">
                  {node.relations.map((r) => (
                    <li key={`${r.relationType}-${r.toUri}`}>
                      {r.relationType} <span class="mono wrap-any">{r.toUri}</span> ({r.weight})
                      {r.reason ? ` — ${r.reason}` : ""}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </>
        )}
      </div>
    </Card>
  );
}

function Remember({ onSaved }: { onSaved: () => void }) {
  const client = useClient();
  const [category, setCategory] = useState<string>("preferences");
  const [title, setTitle] = useState("");
  const [content, setContent] = useState("");
  const [act, state] = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <Card title="Remember">
      <form
        class="form-grid"
        id="memory-put"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            setSaved(null);
            const r = await client.call("memory.put", {
              category,
              title: title.trim() || undefined,
              content,
            });
            setSaved(`Saved ${r.uri} (version ${r.version}).`);
            setTitle("");
            setContent("");
            onSaved();
          });
        }}
      >
        <label>
          Category
          <select name="category" value={category} onChange={(e) => setCategory((e.target as HTMLSelectElement).value)}>
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          Title
          <input name="title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} placeholder="(from the content)" />
        </label>
        <label class="wide">
          Content (markdown)
          <textarea name="content" rows={3} value={content} onInput={(e) => setContent((e.target as HTMLTextAreaElement).value)} />
        </label>
        <div>
          <button type="submit" disabled={state.busy || !content.trim()}>
            Remember
          </button>
        </div>
      </form>
      <ErrorNote error={state.error} />
      {saved && (
        <p class="ok-note wrap-any" id="memory-put-done">
          {saved}
        </p>
      )}
    </Card>
  );
}
