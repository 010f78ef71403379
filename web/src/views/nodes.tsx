// Nodes and tools: every tool the agent can use (tools.list), grouped by
// the node that offers it (`node__Tool`; `gsv__` are the gateway's own),
// what each node declared (skills.status), its own log (logs.get), and a
// form to call a tool.

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import type { JsonValue, LogsGetResult, ToolDefinition } from "../protocol/generated";
import { Card, ErrorNote, Json, fmtAgo, useAction, useClient, useLoad } from "../ui";

const GATEWAY = "gsv";

function nodeOf(tool: string): string {
  const i = tool.indexOf("__");
  return i > 0 ? tool.slice(0, i) : GATEWAY;
}

/** What skills.status says of a node. Its result is an open JSON object
 * in the protocol (its typed form lives in the gateway), so it is read
 * field by field and shown as text, never branched on. */
interface NodeFacts {
  hostRole?: string;
  hostOs?: string;
  hostCapabilities: string[];
  hostBins: string[];
  hostBinStatusUpdatedAt?: number;
}

function str(v: JsonValue | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}
function strs(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function nodeFacts(status: { [key in string]?: JsonValue } | undefined): Map<string, NodeFacts> {
  const out = new Map<string, NodeFacts>();
  const nodes = status?.nodes;
  if (!Array.isArray(nodes)) return out;
  for (const n of nodes) {
    if (!n || typeof n !== "object" || Array.isArray(n)) continue;
    const id = str(n.nodeId);
    if (!id) continue;
    const at = n.hostBinStatusUpdatedAt;
    out.set(id, {
      hostRole: str(n.hostRole),
      hostOs: str(n.hostOs),
      hostCapabilities: strs(n.hostCapabilities),
      hostBins: strs(n.hostBins),
      hostBinStatusUpdatedAt: typeof at === "number" ? at : undefined,
    });
  }
  return out;
}

export function NodesView({ connected }: ViewProps) {
  const client = useClient();
  const tools = useLoad(() => client.call("tools.list"), [client, connected], connected);
  const skills = useLoad(() => client.call("skills.status", {}), [client, connected], connected);
  const [picked, setPicked] = useState<ToolDefinition | null>(null);

  const groups = new Map<string, ToolDefinition[]>();
  for (const t of tools.data?.tools ?? []) {
    const n = nodeOf(t.name);
    groups.set(n, [...(groups.get(n) ?? []), t]);
  }
  const facts = nodeFacts(skills.data);
  const names = [...groups.keys()].sort((a, b) => (a === GATEWAY ? -1 : b === GATEWAY ? 1 : a.localeCompare(b)));

  return (
    <div class="split">
      <div class="stack">
        <Card
          title="Nodes and tools"
          actions={
            <button
              class="secondary"
              onClick={() => {
                tools.reload();
                skills.reload();
              }}
            >
              Refresh
            </button>
          }
        >
          <ErrorNote error={tools.error} />
          {names.length === 1 && <p class="muted">No node is connected: start one with <code>gsv node --foreground</code>.</p>}
        </Card>
        {names.map((n) => {
          const f = facts.get(n);
          const list = groups.get(n) ?? [];
          return (
            <Card key={n} title={n === GATEWAY ? "Gateway (built-in tools)" : <span>Node <span class="mono">{n}</span></span>}>
              {f && (
                <dl class="facts node-facts" data-node={n}>
                  <dt>Role</dt>
                  <dd>{f.hostRole ?? "—"}</dd>
                  <dt>OS</dt>
                  <dd>{f.hostOs ?? "—"}</dd>
                  <dt>Capabilities</dt>
                  <dd>{f.hostCapabilities.join(", ") || "—"}</dd>
                  <dt>Binaries found</dt>
                  <dd>
                    {f.hostBins.join(", ") || "—"}
                    {f.hostBinStatusUpdatedAt !== undefined && <span class="muted small"> (checked {fmtAgo(f.hostBinStatusUpdatedAt)})</span>}
                  </dd>
                </dl>
              )}
              {n !== GATEWAY && <NodeLog nodeId={n} />}
              <ul class="list tools" data-node={n}>
                {list.map((t) => (
                  <li key={t.name}>
                    <button class="list-item" data-tool={t.name} onClick={() => setPicked(t)} title={t.description}>
                      <span class="mono">{t.name}</span>
                      <span class="muted small clamp">{t.description}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </Card>
          );
        })}
      </div>
      {picked && <ToolCall key={picked.name} tool={picked} />}
    </div>
  );
}

/** The end of a node's own log (logs.get, as `gsv logs`). */
function NodeLog({ nodeId }: { nodeId: string }) {
  const client = useClient();
  const [log, setLog] = useState<LogsGetResult | null>(null);
  const [lines, setLines] = useState("100");
  const [run, state] = useAction();
  return (
    <div class="node-log" data-node={nodeId}>
      <div class="row">
        <button
          class="secondary"
          data-action="log"
          disabled={state.busy}
          onClick={() => void run(async () => setLog(await client.call("logs.get", { nodeId, lines: Number(lines) || 100 })))}
        >
          {state.busy ? "Reading the log…" : "Show its log"}
        </button>
        <label class="inline">
          <span class="muted small">last</span>
          <input class="narrow" type="number" min="1" max="5000" value={lines} onInput={(e) => setLines((e.target as HTMLInputElement).value)} />
          <span class="muted small">lines</span>
        </label>
      </div>
      <ErrorNote error={state.error} />
      {log && (
        <pre class="log">
          {log.lines.length ? log.lines.join("\n") : "(empty)"}
          {log.truncated ? "\n… (cut to fit one frame)" : ""}
        </pre>
      )}
    </div>
  );
}

/** Arguments prefilled from the schema's required properties. */
function skeleton(schema: JsonValue): string {
  const out: Record<string, JsonValue> = {};
  if (schema && typeof schema === "object" && !Array.isArray(schema)) {
    const props = schema.properties;
    const required = strs(schema.required);
    if (props && typeof props === "object" && !Array.isArray(props)) {
      for (const k of required) {
        const p = props[k];
        const type = p && typeof p === "object" && !Array.isArray(p) ? str(p.type) : undefined;
        out[k] = type === "number" || type === "integer" ? 0 : type === "boolean" ? false : type === "array" ? [] : type === "object" ? {} : "";
      }
    }
  }
  return JSON.stringify(out, null, 2);
}

function ToolCall({ tool }: { tool: ToolDefinition }) {
  const client = useClient();
  const [args, setArgs] = useState(skeleton(tool.inputSchema));
  const [result, setResult] = useState<JsonValue | undefined>(undefined);
  const [run, state] = useAction();
  const native = nodeOf(tool.name) === GATEWAY;
  return (
    <Card title={<span class="mono">{tool.name}</span>}>
      <p class="small">{tool.description}</p>
      <details>
        <summary>Input schema</summary>
        <Json value={tool.inputSchema} />
      </details>
      {native ? (
        <p class="muted">The gateway's own tools run inside a session, as the agent's; nodes' tools can be called from here.</p>
      ) : (
        <form
          id="tool-call"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              let parsed: JsonValue;
              try {
                parsed = JSON.parse(args) as JsonValue;
              } catch (err) {
                throw new Error(`Arguments are not JSON: ${(err as Error).message}`);
              }
              setResult(undefined);
              const r = await client.call("tool.invoke", { tool: tool.name, args: parsed });
              setResult(r.result);
            });
          }}
        >
          <label>
            Arguments (JSON)
            <textarea class="code" rows={6} value={args} onInput={(e) => setArgs((e.target as HTMLTextAreaElement).value)} />
          </label>
          <button type="submit" disabled={state.busy}>
            {state.busy ? "Running…" : "Call"}
          </button>
        </form>
      )}
      <ErrorNote error={state.error} />
      {result !== undefined && (
        <div id="tool-result">
          <h3>Result</h3>
          <Json value={result} />
        </div>
      )}
    </Card>
  );
}
