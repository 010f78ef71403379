// Chat: one session's history (session.preview, which also makes this
// connection watch the session's `chat` events), paged back 50 messages
// at a time; chat.send; answers growing with each `delta`, turns with
// tool calls (`partial`), the end (`final`/`error`); Stop (chat.abort).
// Slash commands are sent as typed: the session answers them.

import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import type { AssistantMessage, ChatEvent, Message } from "../protocol/generated";
import { ErrorNote, useAction, useClient, useLoad } from "../ui";
import { AssistantView, Markdown, MessageList, MessageView, resultsById } from "./messages";

const PAGE = 50;

/** A run seen through its events: finished turns, and text still coming. */
interface LiveRun {
  runId: string;
  turns: AssistantMessage[];
  text: string;
  done: boolean;
}

/** Something shown in the conversation that the history does not hold. */
interface Note {
  at: number;
  kind: "sent" | "command" | "error";
  text: string;
}

export function ChatView({ settings, update, connected }: ViewProps) {
  const client = useClient();
  const sessionKey = settings.sessionKey;
  const [limit, setLimit] = useState(PAGE);
  const [live, setLive] = useState<LiveRun[]>([]);
  const [notes, setNotes] = useState<Note[]>([]);
  const [draft, setDraft] = useState("");
  const [send, sendState] = useAction();
  const [abort, abortState] = useAction();

  const history = useLoad(() => client.call("session.preview", { sessionKey, limit }), [client, sessionKey, limit, connected], connected);

  // A new session starts empty.
  useEffect(() => {
    setLive([]);
    setNotes([]);
    setLimit(PAGE);
  }, [sessionKey]);

  // Once the history holds a finished run, it is shown from there.
  useEffect(() => {
    const msgs = history.data?.messages;
    if (!msgs) return;
    setLive((runs) => runs.filter((r) => !r.done));
    const userTexts = new Set(msgs.filter((m) => m.role === "user").map((m) => userText(m)));
    setNotes((ns) => ns.filter((n) => n.kind !== "sent" || !userTexts.has(n.text)));
  }, [history.data]);

  useEffect(
    () =>
      client.onChat((evt: ChatEvent) => {
        if (evt.sessionKey !== sessionKey) return;
        const runId = evt.runId ?? "";
        setLive((runs) => applyEvent(runs, runId, evt));
        if (evt.state === "error") {
          setNotes((ns) => [...ns, { at: Date.now(), kind: "error", text: evt.error ?? "The run failed" }]);
        }
        if (evt.state === "final" || evt.state === "error") history.reload();
      }),
    [client, sessionKey],
  );

  const running = live.some((r) => !r.done) || sendState.busy;

  const submit = async () => {
    const text = draft.trim();
    if (!text) return;
    setDraft("");
    setNotes((ns) => [...ns, { at: Date.now(), kind: "sent", text }]);
    await send(async () => {
      const res = await client.call("chat.send", { sessionKey, message: text });
      switch (res.status) {
        case "started":
          setLive((runs) => (runs.some((r) => r.runId === res.runId) ? runs : [...runs, { runId: res.runId, turns: [], text: "", done: false }]));
          break;
        case "command":
          setNotes((ns) => [
            ...ns.filter((n) => !(n.kind === "sent" && n.text === text)),
            { at: Date.now(), kind: res.error ? "error" : "command", text: res.error ?? res.response ?? `/${res.command}` },
          ]);
          if (res.runId) setLive((runs) => [...runs, { runId: res.runId!, turns: [], text: "", done: false }]);
          history.reload();
          break;
        case "directive-only":
          setNotes((ns) => [...ns, { at: Date.now(), kind: "command", text: res.response ?? "Directives noted." }]);
          break;
      }
    });
  };

  const messages = history.data?.messages ?? [];
  const more = (history.data?.messageCount ?? 0) > messages.length;
  const scroller = useStickToBottom([messages, live, notes]);

  return (
    <div class="chat">
      <SessionPicker sessionKey={sessionKey} onPick={(k) => update({ sessionKey: k })} connected={connected} />
      <div class="messages" ref={scroller} id="messages">
        {more && (
          <button class="secondary load-more" onClick={() => setLimit(limit + PAGE)}>
            Load earlier messages
          </button>
        )}
        <ErrorNote error={history.error} />
        {history.data && messages.length === 0 && live.length === 0 && notes.length === 0 && (
          <p class="muted empty">No messages in {sessionKey} yet.</p>
        )}
        <Conversation messages={messages} notes={notes} />
        {live.map((r) => (
          <LiveRunView key={r.runId} run={r} results={resultsById(messages)} />
        ))}
      </div>
      <ErrorNote error={sendState.error ?? abortState.error} />
      <form
        class="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <textarea
          name="message"
          rows={2}
          placeholder="Message, or /help"
          value={draft}
          disabled={!connected}
          onInput={(e) => setDraft((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void submit();
            }
          }}
        />
        <div class="composer-buttons">
          {running && (
            <button
              type="button"
              class="danger"
              id="stop"
              disabled={abortState.busy}
              onClick={() => void abort(() => client.call("chat.abort", { sessionKey }))}
            >
              Stop
            </button>
          )}
          <button type="submit" id="send" disabled={!connected || !draft.trim()}>
            Send
          </button>
        </div>
      </form>
    </div>
  );
}

/** History and notes, in time order. */
function Conversation({ messages, notes }: { messages: Message[]; notes: Note[] }) {
  if (notes.length === 0) return <MessageList messages={messages} />;
  const results = resultsById(messages);
  const items: { at: number; node: preact.JSX.Element }[] = [];
  // Tool results are folded under their calls (MessageList does the same).
  const calls = new Set(messages.flatMap((m) => (m.role === "assistant" ? m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])) : [])));
  messages.forEach((m, i) => {
    if (m.role === "toolResult" && calls.has(m.toolCallId)) return;
    items.push({ at: m.timestamp, node: <MessageView key={`m${i}`} message={m} results={results} /> });
  });
  notes.forEach((n, i) =>
    items.push({
      at: n.at,
      node:
        n.kind === "sent" ? (
          <div key={`n${i}`} class="msg user pending" data-role="user">
            <div class="plain">{n.text}</div>
          </div>
        ) : (
          <div key={`n${i}`} class={`note ${n.kind}`} data-note={n.kind}>
            <Markdown text={n.text} />
          </div>
        ),
    }),
  );
  items.sort((a, b) => a.at - b.at);
  return <>{items.map((i) => i.node)}</>;
}

function LiveRunView({ run, results }: { run: LiveRun; results: ReturnType<typeof resultsById> }) {
  return (
    <div class="live-run" data-run={run.runId}>
      {run.turns.map((t, i) => (
        <AssistantView key={i} message={t} results={results} />
      ))}
      {!run.done && (
        <AssistantView
          message={{ content: run.text ? [{ type: "text", text: run.text }] : [], timestamp: Date.now() }}
          results={results}
          streaming
        />
      )}
    </div>
  );
}

export function applyEvent(runs: LiveRun[], runId: string, evt: ChatEvent): LiveRun[] {
  const known = runs.find((r) => r.runId === runId);
  const run: LiveRun = known ? { ...known } : { runId, turns: [], text: "", done: false };
  switch (evt.state) {
    case "delta":
      run.text += evt.delta ?? "";
      break;
    case "partial":
      if (evt.message) run.turns = [...run.turns, evt.message];
      run.text = "";
      break;
    case "final":
      if (evt.message) run.turns = [...run.turns, evt.message];
      run.text = "";
      run.done = true;
      break;
    case "error":
      run.text = "";
      run.done = true;
      break;
  }
  return known ? runs.map((r) => (r.runId === runId ? run : r)) : [...runs, run];
}

function userText(m: Message): string {
  if (m.role !== "user") return "";
  return typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
}

/** Keeps the list scrolled to the bottom while the reader is there. */
function useStickToBottom(deps: unknown[]) {
  const ref = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onScroll = () => {
      stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
    };
    el.addEventListener("scroll", onScroll);
    return () => el.removeEventListener("scroll", onScroll);
  }, []);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, deps);
  return ref;
}

function SessionPicker({ sessionKey, onPick, connected }: { sessionKey: string; onPick: (k: string) => void; connected: boolean }) {
  const client = useClient();
  const list = useLoad(() => client.call("sessions.list", { limit: 100 }), [client, connected], connected);
  const [adding, setAdding] = useState(false);
  const [newKey, setNewKey] = useState("");
  const keys = (list.data?.sessions ?? []).map((s) => s.sessionKey);
  if (!keys.includes(sessionKey)) keys.unshift(sessionKey);
  return (
    <div class="session-picker">
      <label class="inline">
        <span class="muted">Session</span>
        <select
          name="session"
          value={sessionKey}
          onChange={(e) => onPick((e.target as HTMLSelectElement).value)}
        >
          {keys.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      {adding ? (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            if (newKey.trim()) onPick(newKey.trim());
            setAdding(false);
            setNewKey("");
          }}
        >
          <input value={newKey} placeholder="agent:main:web:dm:notes" onInput={(e) => setNewKey((e.target as HTMLInputElement).value)} />
          <button type="submit">Open</button>
        </form>
      ) : (
        <button class="secondary" onClick={() => setAdding(true)}>
          Other session…
        </button>
      )}
    </div>
  );
}
