// Channels and pairing: the chat-app accounts the gateway knows
// (channels.list), an account's live status (channel.status), start/stop,
// the senders waiting for approval (pair.list/approve/reject), and the
// tool calls waiting for the owner's decision (approvals.list/decide).

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import type { Approval, ChannelAccountConfig, ChannelRegistryEntry, ChannelStatusRpcResult, PendingPair } from "../protocol/generated";
import { Card, ErrorNote, Json, fmtAgo, useAction, useClient, useLoad } from "../ui";

export function ChannelsView({ connected }: ViewProps) {
  return (
    <div class="stack">
      <Approvals connected={connected} />
      <Pairing connected={connected} />
      <Channels connected={connected} />
    </div>
  );
}

// Calls of `ask` tools (tools.policy.*.ask) from people and groups: who
// asked, the tool and its exact arguments; approve once or always, deny.
function Approvals({ connected }: { connected: boolean }) {
  const client = useClient();
  const list = useLoad(() => client.call("approvals.list"), [client, connected], connected);
  const [act, state] = useAction();
  const [done, setDone] = useState<string | null>(null);
  const decide = (a: Approval, approve: boolean, always: boolean) =>
    act(async () => {
      const r = await client.call("approvals.decide", { code: a.code, approve, always });
      setDone(`${r.approval.tool} ${r.decision} for ${r.approval.who ?? r.approval.sessionKey}.`);
      list.reload();
    });
  const waiting = list.data?.approvals ?? [];
  return (
    <Card title="Waiting for your approval" actions={<button class="secondary" onClick={list.reload}>Refresh</button>}>
      <ErrorNote error={list.error ?? state.error} />
      {done && <p class="ok-note" id="approval-done">{done}</p>}
      {list.data && waiting.length === 0 && <p class="muted">No tool call waits for your approval.</p>}
      <ul class="list" id="approvals">
        {waiting.map((a) => (
          <li key={a.code} class="pair" data-code={a.code}>
            <div class="pair-who">
              <strong class="mono">{a.tool}</strong>{" "}
              <span class="muted small">
                {a.who ?? a.sessionKey} ({a.trust.level === a.trust.actsAs ? a.trust.level : `${a.trust.level} as ${a.trust.actsAs}`}) · code{" "}
                <span class="mono">{a.code}</span> · denied by itself {fmtAgo(a.expiresAtMs)}
              </span>
              <Json value={a.args} />
            </div>
            <div class="row">
              <button onClick={() => void decide(a, true, false)} disabled={state.busy} data-action="approve">
                Approve
              </button>
              <button class="secondary" onClick={() => void decide(a, true, true)} disabled={state.busy} data-action="approve-always">
                Always
              </button>
              <button class="secondary" onClick={() => void decide(a, false, false)} disabled={state.busy} data-action="deny">
                Deny
              </button>
            </div>
          </li>
        ))}
      </ul>
    </Card>
  );
}

function Pairing({ connected }: { connected: boolean }) {
  const client = useClient();
  const pairs = useLoad(() => client.call("pair.list"), [client, connected], connected);
  const [act, state] = useAction();
  const [done, setDone] = useState<string | null>(null);
  const list: PendingPair[] = Object.values(pairs.data?.pairs ?? {}).filter((p): p is PendingPair => !!p);
  const decide = (p: PendingPair, approve: boolean) =>
    act(async () => {
      if (approve) {
        const r = await client.call("pair.approve", { code: p.code });
        setDone(`Approved ${r.senderName ?? r.senderId} on ${r.channel}${r.notified ? " (told in the chat)" : ""}.`);
      } else {
        const r = await client.call("pair.reject", { code: p.code });
        setDone(`Rejected ${r.senderId} on ${r.channel}.`);
      }
      pairs.reload();
    });
  return (
    <Card title="Pairing requests" actions={<button class="secondary" onClick={pairs.reload}>Refresh</button>}>
      <ErrorNote error={pairs.error ?? state.error} />
      {done && <p class="ok-note">{done}</p>}
      {pairs.data && list.length === 0 && <p class="muted">Nobody is waiting for approval.</p>}
      <ul class="list" id="pairs">
        {list.map((p) => (
          <li key={`${p.channel}:${p.senderId}`} class="pair" data-code={p.code}>
            <div class="pair-who">
              <strong>{p.senderName ?? p.senderId}</strong>{" "}
              <span class="muted small">
                {p.channel}:{p.senderId} · code <span class="mono">{p.code}</span> · asked {fmtAgo(p.requestedAt)} · expires {fmtAgo(p.expiresAt)}
              </span>
            </div>
            <div class="row">
              <button onClick={() => void decide(p, true)} disabled={state.busy} data-action="approve">
                Approve
              </button>
              <button class="secondary" onClick={() => void decide(p, false)} disabled={state.busy} data-action="reject">
                Reject
              </button>
            </div>
          </li>
        ))}
      </ul>
    </Card>
  );
}

function Channels({ connected }: { connected: boolean }) {
  const client = useClient();
  const list = useLoad(() => client.call("channels.list"), [client, connected], connected);
  return (
    <>
      <Card title="Channels" actions={<button class="secondary" onClick={list.reload}>Refresh</button>}>
        <ErrorNote error={list.error} />
        {list.data && list.data.channels.length === 0 && <p class="muted">No channel account has been started yet.</p>}
        <div class="grid">
          {(list.data?.channels ?? []).map((c) => (
            <Account key={`${c.channel}:${c.accountId}`} entry={c} onChanged={list.reload} />
          ))}
        </div>
      </Card>
      <StartForm onStarted={list.reload} />
    </>
  );
}

function Account({ entry, onChanged }: { entry: ChannelRegistryEntry; onChanged: () => void }) {
  const client = useClient();
  const [status, setStatus] = useState<ChannelStatusRpcResult | null>(null);
  const [act, state] = useAction();
  const s = entry.status;
  return (
    <div class="account" data-channel={entry.channel}>
      <h3>
        {entry.channel} <span class="muted small">{entry.accountId}</span>{" "}
        {s ? <span class={`pill ${s.connected ? "ok" : "error"}`}>{s.connected ? "connected" : "disconnected"}</span> : <span class="pill">no status yet</span>}
      </h3>
      <dl class="facts">
        <dt>Via</dt>
        <dd>{entry.transport ?? "—"}</dd>
        <dt>Connected</dt>
        <dd>{fmtAgo(entry.connectedAt)}</dd>
        <dt>Last message</dt>
        <dd>{fmtAgo(entry.lastMessageAt)}</dd>
        {s?.error && (
          <>
            <dt>Error</dt>
            <dd class="error">{s.error}</dd>
          </>
        )}
        <dt>Undelivered</dt>
        <dd>
          {entry.failedDeliveries}
          {entry.lastDeliveryError ? ` (${entry.lastDeliveryError})` : ""}
        </dd>
        {(entry.delivered ?? 0) > 0 && (
          <>
            <dt>Delivered (24 h)</dt>
            <dd>
              {entry.delivered}, {entry.read ?? 0} read
            </dd>
          </>
        )}
      </dl>
      <div class="row wrap">
        <button
          class="secondary"
          disabled={state.busy}
          onClick={() => void act(async () => setStatus(await client.call("channel.status", { channel: entry.channel, accountId: entry.accountId })))}
        >
          Status
        </button>
        <button
          class="secondary"
          disabled={state.busy}
          onClick={() =>
            void act(async () => {
              await client.call("channel.start", { channel: entry.channel, accountId: entry.accountId });
              onChanged();
            })
          }
        >
          Start
        </button>
        <button
          class="danger"
          disabled={state.busy}
          onClick={() =>
            void act(async () => {
              await client.call("channel.stop", { channel: entry.channel, accountId: entry.accountId });
              onChanged();
            })
          }
        >
          Stop
        </button>
      </div>
      <ErrorNote error={state.error} />
      {status && <Json value={status} />}
    </div>
  );
}

/** Starts an account; secrets typed here go to the channel and are never
 * shown again. */
function StartForm({ onStarted }: { onStarted: () => void }) {
  const client = useClient();
  const [channel, setChannel] = useState("discord");
  const [accountId, setAccountId] = useState("default");
  const [botToken, setBotToken] = useState("");
  const [phoneNumberId, setPhoneNumberId] = useState("");
  const [accessToken, setAccessToken] = useState("");
  const [act, state] = useAction();
  const [result, setResult] = useState<string | null>(null);
  return (
    <Card title="Start a channel account">
      <form
        class="form-grid"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const config: ChannelAccountConfig = {};
            if (botToken) config.botToken = botToken;
            if (phoneNumberId) config.phoneNumberId = phoneNumberId;
            if (accessToken) config.accessToken = accessToken;
            const r = await client.call("channel.start", {
              channel: channel.trim(),
              accountId: accountId.trim() || "default",
              config: Object.keys(config).length ? config : null,
            });
            setBotToken("");
            setAccessToken("");
            setResult(`Started ${r.channel}:${r.accountId}${r.message ? ` — ${r.message}` : ""}`);
            onStarted();
          });
        }}
      >
        <label>
          Channel
          <input value={channel} onInput={(e) => setChannel((e.target as HTMLInputElement).value)} placeholder="discord or whatsapp" />
        </label>
        <label>
          Account
          <input value={accountId} onInput={(e) => setAccountId((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Bot token (Discord)
          <input type="password" autocomplete="off" value={botToken} onInput={(e) => setBotToken((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Phone number id (WhatsApp)
          <input value={phoneNumberId} onInput={(e) => setPhoneNumberId((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Access token (WhatsApp)
          <input type="password" autocomplete="off" value={accessToken} onInput={(e) => setAccessToken((e.target as HTMLInputElement).value)} />
        </label>
        <div>
          <button type="submit" disabled={state.busy || !channel.trim()}>
            Start
          </button>
        </div>
      </form>
      <ErrorNote error={state.error} />
      {result && <p class="ok-note">{result}</p>}
    </Card>
  );
}
