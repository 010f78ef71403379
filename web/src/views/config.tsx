// Config: the gateway's configuration as the gateway shows it (config.get,
// secrets masked), one row per setting, and config.set with the values
// read as `gsv config set` reads them (JSON when it parses, else text), so
// the gateway's validation errors are the CLI's. A secret's field starts
// empty: it can be replaced, never read.

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import { SECRET_MASK, type JsonValue } from "../protocol/generated";
import { Card, ErrorNote, parseLooseJson, useAction, useClient, useLoad } from "../ui";

interface Row {
  path: string;
  value: JsonValue;
}

/** Leaves of the config: objects are walked, anything else is a row. */
export function flatten(v: JsonValue, prefix = "", out: Row[] = []): Row[] {
  if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0) {
    for (const [k, child] of Object.entries(v)) flatten(child ?? null, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out.push({ path: prefix, value: v });
  }
  return out;
}

/** The text a value is edited as: strings bare unless they would read back as
 * something else. */
function editText(v: JsonValue): string {
  if (typeof v === "string") return parseLooseJson(v) === v ? v : JSON.stringify(v);
  return JSON.stringify(v);
}

export function ConfigView({ connected }: ViewProps) {
  const client = useClient();
  const config = useLoad(() => client.call("config.get", {}), [client, connected], connected);
  const [filter, setFilter] = useState("");
  const whole = config.data && "config" in config.data ? config.data.config : null;
  const rows = whole ? flatten(whole) : [];
  const shown = rows.filter((r) => r.path.toLowerCase().includes(filter.toLowerCase()));
  return (
    <div class="stack">
      <SetForm onSet={config.reload} />
      <Card
        title="Configuration"
        actions={
          <input class="filter" type="search" placeholder="Filter" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        }
      >
        <ErrorNote error={config.error} />
        <ul class="list config-rows" id="config-rows">
          {shown.map((r) => (
            <ConfigRow key={r.path} row={r} onSet={config.reload} />
          ))}
        </ul>
      </Card>
    </div>
  );
}

function ConfigRow({ row, onSet }: { row: Row; onSet: () => void }) {
  const client = useClient();
  const secret = row.value === SECRET_MASK;
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const [act, state] = useAction();
  return (
    <li class="config-row" data-path={row.path}>
      <div class="config-line">
        <span class="mono path">{row.path}</span>
        {secret ? <span class="pill secret">secret</span> : <code class="value">{JSON.stringify(row.value)}</code>}
        {!editing && (
          <button
            class="link"
            onClick={() => {
              setText(secret ? "" : editText(row.value));
              setEditing(true);
            }}
          >
            {secret ? "Replace" : "Edit"}
          </button>
        )}
      </div>
      {editing && (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void act(async () => {
              await client.call("config.set", { path: row.path, value: parseLooseJson(text) as JsonValue });
              setEditing(false);
              onSet();
            });
          }}
        >
          {secret ? (
            <input type="password" autocomplete="off" value={text} placeholder="new value" onInput={(e) => setText((e.target as HTMLInputElement).value)} />
          ) : (
            <input type="text" autocomplete="off" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
          )}
          <button type="submit" disabled={state.busy}>
            Set
          </button>
          <button type="button" class="secondary" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      )}
      <ErrorNote error={state.error} />
    </li>
  );
}

function SetForm({ onSet }: { onSet: () => void }) {
  const client = useClient();
  const [path, setPath] = useState("");
  const [value, setValue] = useState("");
  const [act, state] = useAction();
  const [done, setDone] = useState<string | null>(null);
  return (
    <Card title="Set a value">
      <form
        class="form-grid"
        id="config-set"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            setDone(null);
            const r = await client.call("config.set", { path: path.trim(), value: parseLooseJson(value) as JsonValue });
            setDone(`Set ${r.path}.`);
            setValue("");
            onSet();
          });
        }}
      >
        <label>
          Path
          <input name="path" value={path} placeholder="model.id" onInput={(e) => setPath((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Value (JSON, or text)
          <input name="value" autocomplete="off" value={value} placeholder="gpt-4.1" onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
        </label>
        <div>
          <button type="submit" disabled={state.busy || !path.trim()}>
            Set
          </button>
        </div>
      </form>
      <ErrorNote error={state.error} id="config-set-error" />
      {done && (
        <p class="ok-note" id="config-set-done">
          {done}
        </p>
      )}
    </Card>
  );
}
