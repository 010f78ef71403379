// Sessions: what the model calls used and cost (usage.tsx), the list
// (sessions.list), one session's stats (tokens, the
// R2 reads of its last prompt), reset, compact, and the archived
// transcripts of its earlier session ids (session.history/transcript).

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import type { SessionTranscriptResult, TokenCounts, Trust } from "../protocol/generated";
import { Card, ErrorNote, fmtAgo, fmtTime, useAction, useClient, useLoad } from "../ui";
import { MessageList } from "./messages";
import { costText, UsageCard } from "./usage";

export function SessionsView({ settings, update, connected, go }: ViewProps) {
  const client = useClient();
  const list = useLoad(() => client.call("sessions.list", { limit: 200 }), [client, connected], connected);
  const [selected, setSelected] = useState<string | null>(null);
  return (
    <>
    <UsageCard connected={connected} />
    <div class="split">
      <Card title={`Sessions${list.data ? ` (${list.data.count})` : ""}`} actions={<button class="secondary" onClick={list.reload}>Refresh</button>}>
        <ErrorNote error={list.error} />
        <ul class="list" id="session-list">
          {(list.data?.sessions ?? []).map((s) => (
            <li key={s.sessionKey} class={s.sessionKey === selected ? "selected" : ""}>
              <button class="list-item" onClick={() => setSelected(s.sessionKey)}>
                <span class="mono">{s.sessionKey}</span>
                {s.label && <span class="pill">{s.label}</span>}
                <span class="muted small">active {fmtAgo(s.lastActiveAt)}</span>
              </button>
            </li>
          ))}
        </ul>
        {list.data && list.data.sessions.length === 0 && <p class="muted">No sessions yet.</p>}
      </Card>
      {selected && (
        <SessionDetail
          key={selected}
          sessionKey={selected}
          onOpen={() => {
            update({ sessionKey: selected });
            go("/chat");
          }}
          onChanged={list.reload}
          current={settings.sessionKey === selected}
        />
      )}
    </div>
    </>
  );
}

function SessionDetail({ sessionKey, onOpen, onChanged, current }: { sessionKey: string; onOpen: () => void; onChanged: () => void; current: boolean }) {
  const client = useClient();
  const stats = useLoad(() => client.call("session.stats", { sessionKey }), [client, sessionKey]);
  const info = useLoad(() => client.call("session.get", { sessionKey }), [client, sessionKey]);
  const [act, actState] = useAction();
  const [outcome, setOutcome] = useState<string | null>(null);
  const [keep, setKeep] = useState("20");
  const s = stats.data;
  const load = s?.lastWorkspaceLoad;

  const reset = () =>
    act(async () => {
      if (!confirm(`Archive every message of ${sessionKey} and start a new session id?`)) return;
      const r = await client.call("session.reset", { sessionKey });
      setOutcome(`Reset: ${r.archivedMessages} messages archived${r.archivedTo ? ` to ${r.archivedTo}` : ""}; new session id ${r.newSessionId}.`);
      stats.reload();
      info.reload();
      onChanged();
    });
  const compact = () =>
    act(async () => {
      const n = Number.parseInt(keep, 10);
      if (!Number.isFinite(n) || n < 0) throw new Error("Keep: a number of messages");
      const r = await client.call("session.compact", { sessionKey, keepMessages: n });
      setOutcome(`Compacted: ${r.trimmedMessages} archived, ${r.keptMessages} kept${r.archivedTo ? ` (${r.archivedTo})` : ""}.`);
      stats.reload();
    });

  return (
    <div class="stack">
      <Card
        title={<span class="mono">{sessionKey}</span>}
        actions={
          <button onClick={onOpen}>{current ? "Back to chat" : "Open in chat"}</button>
        }
      >
        <ErrorNote error={stats.error ?? info.error ?? actState.error} />
        {s && (
          <dl class="facts" id="session-stats">
            <dt>Session id</dt>
            <dd class="mono">{s.sessionId}</dd>
            <dt>Messages</dt>
            <dd>{s.messageCount}</dd>
            <dt>Tokens</dt>
            <dd>
              {s.tokens.total} ({s.tokens.input} in, {s.tokens.output} out)
            </dd>
            {s.tokens.cacheRead + s.tokens.cacheWrite > 0 && (
              <>
                <dt>Cache</dt>
                <dd>{cacheText(s.tokens)}</dd>
              </>
            )}
            {s.tokens.cost != null && (
              <>
                <dt>Cost</dt>
                <dd>{costText(s.tokens.cost)} (estimated)</dd>
              </>
            )}
            <dt>Created</dt>
            <dd>{fmtTime(s.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{fmtAgo(s.updatedAt)}</dd>
            <dt>Running</dt>
            <dd>{s.isProcessing ? `yes, ${s.queueSize} queued` : "no"}</dd>
            <dt>Trust</dt>
            <dd data-field="trust">{s.trust ? trustText(s.trust) : "no message yet"}</dd>
            {load && (
              <>
                <dt>Last prompt's reads</dt>
                <dd>
                  {load.r2Gets} gets, {load.r2Lists} lists, {load.r2Puts} puts in {load.batches} batch{load.batches === 1 ? "" : "es"}; {load.filesCached} files and{" "}
                  {load.skillsCached} skills from cache
                  {load.earlyCall === "reused"
                    ? "; the previous prompt, unchanged: nothing read"
                    : load.earlyCall
                      ? `; early model call ${load.earlyCall}`
                      : ""}
                </dd>
              </>
            )}
          </dl>
        )}
        {info.data && (
          <dl class="facts">
            <dt>Model</dt>
            <dd>{info.data.settings.model ? `${info.data.settings.model.provider}/${info.data.settings.model.id}` : "default"}</dd>
            <dt>Thinking</dt>
            <dd>{info.data.settings.thinkingLevel ?? "default"}</dd>
            <dt>Last reset</dt>
            <dd>{fmtTime(info.data.lastResetAt)}</dd>
          </dl>
        )}
        <div class="row wrap">
          <button class="danger" id="reset" onClick={reset} disabled={actState.busy}>
            Reset
          </button>
          <label class="inline">
            Keep
            <input class="narrow" type="number" name="keep" min="0" value={keep} onInput={(e) => setKeep((e.target as HTMLInputElement).value)} />
          </label>
          <button class="secondary" id="compact" onClick={compact} disabled={actState.busy}>
            Compact
          </button>
        </div>
        {outcome && (
          <p class="ok-note" id="session-outcome">
            {outcome}
          </p>
        )}
      </Card>
      <TrustPanel sessionKey={sessionKey} />
      {info.data && <Transcripts sessionKey={sessionKey} ids={[...info.data.previousSessionIds].reverse()} current={info.data.sessionId} />}
    </div>
  );
}

/** `39000 read / 1300 written (94% of input)`, as the CLI and /status say it. */
function cacheText(t: TokenCounts): string {
  const all = t.input + t.cacheRead + t.cacheWrite;
  const share = all === 0 ? 0 : Math.round((100 * t.cacheRead) / all);
  return `${t.cacheRead} read / ${t.cacheWrite} written (${share}% of input)`;
}

function trustText(t: Trust): string {
  return t.level === t.actsAs ? t.level : `${t.level} (as ${t.actsAs})`;
}

// What the session's speaker may make the agent do (trust.explain): the
// landing rule, whether session-changing commands are taken, and each
// tool offered or refused with the rule that decided it.
function TrustPanel({ sessionKey }: { sessionKey: string }) {
  const client = useClient();
  const r = useLoad(() => client.call("trust.explain", { sessionKey }), [client, sessionKey]);
  const e = r.data;
  return (
    <Card title="Who may do what">
      <ErrorNote error={r.error} />
      {e && (
        <div id="trust-explain">
          <dl class="facts">
            <dt>Level</dt>
            <dd data-field="level">
              {trustText(e.trust)} <span class="muted small">({e.trustSource})</span>
            </dd>
            <dt>Who lands here</dt>
            <dd>{e.landing}</dd>
            <dt>Session commands</dt>
            <dd>{e.mayChangeSession ? "taken" : "refused (only the owner, or a person in their own session)"}</dd>
          </dl>
          <ul class="list small" id="trust-tools">
            {e.tools.map((t) => (
              <li key={t.name} data-tool={t.name} data-allowed={String(t.allowed)}>
                <span class={t.allowed ? "pill" : "pill muted"}>{t.allowed ? "offered" : "refused"}</span> <span class="mono">{t.name}</span>{" "}
                <span class="muted">{t.rule}</span>
              </li>
            ))}
          </ul>
          {e.warnings.length > 0 && (
            <ul class="alerts" role="alert">
              {e.warnings.map((w) => (
                <li key={w} class="error">
                  {w}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </Card>
  );
}

function Transcripts({ sessionKey, ids, current }: { sessionKey: string; ids: string[]; current: string }) {
  const client = useClient();
  const [open, setOpen] = useState<string | null>(null);
  const [page, setPage] = useState<SessionTranscriptResult | null>(null);
  const [act, state] = useAction();
  const show = (sessionId: string, offset = 0) =>
    act(async () => {
      const r = await client.call("session.transcript", { sessionKey, sessionId, offset, limit: 100 });
      setOpen(sessionId);
      setPage(r);
    });
  const all = [current, ...ids];
  return (
    <Card title="Archived transcripts">
      <p class="muted small">What compaction and resets moved to R2, by session id (the current one holds its compacted parts).</p>
      <ul class="list">
        {all.map((id) => (
          <li key={id}>
            <button class="list-item" data-archive-id={id} onClick={() => void show(id)}>
              <span class="mono">{id}</span>
              {id === current && <span class="pill">current</span>}
            </button>
          </li>
        ))}
      </ul>
      <ErrorNote error={state.error} />
      {open && page && (
        <div class="transcript" id="transcript">
          <p class="muted small">
            {page.archives.length === 0 ? "Nothing archived for this session id." : `${page.archives.length} archive(s): ${page.archives.join(", ")}`}
          </p>
          <div class="messages static">
            <MessageList messages={page.messages} />
          </div>
          {page.nextOffset != null && (
            <button class="secondary" onClick={() => void show(open, page.nextOffset ?? 0)}>
              Next page
            </button>
          )}
        </div>
      )}
    </Card>
  );
}
