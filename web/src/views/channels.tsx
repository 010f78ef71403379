// Channels and pairing: the chat-app accounts the gateway knows
// (channels.list), an account's live status (channel.status), start/stop,
// the senders waiting for approval (pair.list/approve/reject), and the
// tool calls waiting for the owner's decision (approvals.list/decide),
// and linking an account that logs in by a code (channel.login/logout).

import { useEffect, useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import type {
  Approval,
  ChannelAccountConfig,
  ChannelAccountStatus,
  ChannelLoginRpcResult,
  ChannelRegistryEntry,
  ChannelStatusRpcResult,
  PendingPair,
} from "../protocol/generated";
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
  // Linked from the control below: it stays to say so beside the new card.
  const [linkedNew, setLinkedNew] = useState(false);
  const showLinkNew = linkedNew || !(list.data?.channels ?? []).some((c) => c.channel === WHATSAPP_WEB);
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
        {list.data && showLinkNew && (
          <LinkNew
            connected={connected}
            onChanged={() => {
              setLinkedNew(true);
              list.reload();
            }}
          />
        )}
      </Card>
      <StartForm onStarted={list.reload} />
    </>
  );
}

/** Links the default WhatsApp Web account while the gateway lists none
 * (the channel reports it once linked): asks the channel how the link
 * stands (a gateway without the channel refuses, and then Link says why)
 * and offers Unlink once linked, before the list has caught up. */
function LinkNew({ connected, onChanged }: { connected: boolean; onChanged: () => void }) {
  const client = useClient();
  const status = useLoad(() => client.call("channel.status", { channel: WHATSAPP_WEB, accountId: "default" }), [client, connected], connected);
  const link = linkOf(status.data?.accounts.find((a) => a.accountId === "default"));
  // Just linked, the device is still opening its socket: ask again until
  // the link says where it ended.
  const { reload } = status;
  useEffect(() => {
    if (link?.state !== "connecting") return;
    const timer = setTimeout(reload, 1000);
    return () => clearTimeout(timer);
  }, [link?.state, status.data, reload]);
  return (
    <div class="account" id="link-new">
      <h3>
        Link WhatsApp <span class="muted small">your own number</span>{" "}
        {link && (
          <span class={`pill ${link.phone ? "ok" : ""}`} data-state={link.state}>
            {link.state}
          </span>
        )}
      </h3>
      {link?.phone && (
        <dl class="facts">
          <dt>Number</dt>
          <dd>{link.phone}</dd>
        </dl>
      )}
      <LinkDevice
        channel={WHATSAPP_WEB}
        accountId="default"
        onChanged={() => {
          status.reload();
          onChanged();
        }}
        onCodeShown={status.reload}
        canUnlink={!!link?.phone}
      />
    </div>
  );
}

/** Where a linked-device account's link stands (its status's
 * `extra.state`) and the number, while linked. */
function linkOf(account: ChannelAccountStatus | undefined): { state: string; phone: string | null } | null {
  const extra = account?.extra as { state?: unknown; phone?: unknown } | null | undefined;
  if (!account || typeof extra?.state !== "string") return null;
  const phone = account.authenticated && typeof extra.phone === "string" ? extra.phone : null;
  return { state: extra.state, phone };
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
      {(entry.channel === WHATSAPP_WEB || s?.mode === "linked-device") && (
        <LinkDevice channel={entry.channel} accountId={entry.accountId} onChanged={onChanged} canUnlink />
      )}
    </div>
  );
}

/** The channel that links the user's own WhatsApp number as a companion
 * device, by a QR code or a pairing code. */
const WHATSAPP_WEB = "whatsapp-web";

/** Links an account that logs in by a code: Link asks channel.login and
 * asks again every 2 s while shown and not linked (WhatsApp rotates the QR
 * code), stopping once linked, closed or refused; Unlink is
 * channel.logout. With a phone number it asks for a pairing code to type
 * on that phone instead. `onCodeShown` hears of the first code shown
 * (the account now waits for a scan). */
function LinkDevice({
  channel,
  accountId,
  onChanged,
  onCodeShown,
  canUnlink,
}: {
  channel: string;
  accountId: string;
  onChanged: () => void;
  onCodeShown?: () => void;
  canUnlink: boolean;
}) {
  const client = useClient();
  // The phone number the open link asks with ("" for a QR code), null
  // while closed.
  const [asking, setAsking] = useState<string | null>(null);
  const [phone, setPhone] = useState("");
  const [login, setLogin] = useState<ChannelLoginRpcResult | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [act, state] = useAction();
  const [done, setDone] = useState<string | null>(null);
  useEffect(() => {
    if (asking === null) return;
    let stopped = false;
    let shown = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ask = async () => {
      try {
        const r = await client.call("channel.login", {
          channel,
          accountId,
          force: false,
          ...(asking ? { phoneNumber: asking } : {}),
        });
        if (stopped) return;
        setLogin(r);
        if (!r.ok) return;
        if (r.linked) {
          onChanged();
          return;
        }
        if (!shown && (r.qrDataUrl || r.pairCode)) {
          shown = true;
          onCodeShown?.();
        }
      } catch (e) {
        if (!stopped) setError(e as Error);
        return;
      }
      timer = setTimeout(() => void ask(), 2000);
    };
    void ask();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [asking, client, channel, accountId]);
  // Opens the link asking with `number` ("" for a QR code), or closes it.
  const open = (number: string | null) => {
    setLogin(null);
    setError(null);
    setDone(null);
    setAsking(number);
  };
  return (
    <div class="link-device" data-link={`${channel}:${accountId}`}>
      <div class="row wrap">
        {asking === null ? (
          <button onClick={() => open("")} data-action="link">
            Link
          </button>
        ) : (
          <button class="secondary" onClick={() => open(null)} data-action="close-link">
            Close
          </button>
        )}
        {canUnlink && (
          <button
            class="danger"
            disabled={state.busy}
            data-action="unlink"
            onClick={() => {
              if (!confirm(`Unlink ${channel}:${accountId}? It stops answering until linked again.`)) return;
              void act(async () => {
                open(null);
                const r = await client.call("channel.logout", { channel, accountId });
                setDone(`Unlinked ${r.channel}:${r.accountId}${r.message ? ` — ${r.message}` : ""}.`);
                onChanged();
              });
            }}
          >
            Unlink
          </button>
        )}
      </div>
      {asking === null && (
        <form
          class="row wrap"
          onSubmit={(e) => {
            e.preventDefault();
            if (phone.trim()) open(phone.trim());
          }}
        >
          <input
            name="phoneNumber"
            type="tel"
            value={phone}
            onInput={(e) => setPhone((e.target as HTMLInputElement).value)}
            placeholder="or a phone number, for a pairing code"
          />
          <button type="submit" class="secondary" disabled={!phone.trim()}>
            Get code
          </button>
        </form>
      )}
      <ErrorNote error={error ?? state.error} />
      {done && <p class="ok-note">{done}</p>}
      {asking !== null && login && (
        <div class="link-state">
          {!login.ok ? (
            <p class="error" role="alert">
              {login.message}
            </p>
          ) : login.linked ? (
            <p class="ok-note">{/linked as /i.test(login.message) ? capitalized(login.message) : `Linked: ${login.message}`}</p>
          ) : (
            <>
              {login.qrDataUrl && (
                <img src={login.qrDataUrl} alt="WhatsApp QR code" width={256} height={256} style={{ maxWidth: "100%", height: "auto", background: "#fff" }} />
              )}
              {login.pairCode && <p class="mono" style={{ fontSize: "2rem", letterSpacing: "0.2em" }}>{login.pairCode}</p>}
              <p class="muted small">{login.message}</p>
            </>
          )}
        </div>
      )}
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

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
