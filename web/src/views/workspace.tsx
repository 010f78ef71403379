// Workspace: the agent's files in R2 (workspace.list/read/write/delete).
// A save names the version it was read at (`expectedEtag`); when someone
// (the agent, the CLI, another tab) changed the file meanwhile, nothing is
// overwritten: both versions are shown and the user picks.

import { useState } from "preact/hooks";
import type { ViewProps } from "../tabs";
import { RpcError } from "../client";
import { codes, type WorkspaceReadResult } from "../protocol/generated";
import { Card, ErrorNote, fmtTime, useAction, useClient, useLoad } from "../ui";

function join(dir: string, name: string): string {
  return dir ? `${dir.replace(/\/$/, "")}/${name}` : name;
}

function parent(dir: string): string {
  const parts = dir.replace(/\/$/, "").split("/");
  parts.pop();
  return parts.join("/");
}

export function WorkspaceView({ connected }: ViewProps) {
  const client = useClient();
  const [agentId, setAgentId] = useState("main");
  const [dir, setDir] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const listing = useLoad(() => client.call("workspace.list", { path: dir, agentId }), [client, dir, agentId, connected], connected);
  const [creating, setCreating] = useState("");

  return (
    <div class="split">
      <Card
        title="Workspace"
        actions={
          <label class="inline">
            <span class="muted">Agent</span>
            <input class="narrow" value={agentId} onChange={(e) => setAgentId((e.target as HTMLInputElement).value.trim() || "main")} />
          </label>
        }
      >
        <p class="mono small crumbs">
          agents/{agentId}/{dir}
        </p>
        <ErrorNote error={listing.error} />
        <ul class="list" id="workspace-files">
          {dir && (
            <li>
              <button class="list-item" onClick={() => setDir(parent(dir))}>
                ← ..
              </button>
            </li>
          )}
          {(listing.data?.directories ?? []).map((d) => (
            <li key={`d-${d}`}>
              <button class="list-item" onClick={() => setDir(join(dir, d))}>
                <span class="mono">{d.replace(/\/$/, "")}/</span>
              </button>
            </li>
          ))}
          {(listing.data?.files ?? []).map((f) => {
            const path = join(dir, f);
            return (
              <li key={`f-${f}`} class={open === path ? "selected" : ""}>
                <button class="list-item" data-file={path} onClick={() => setOpen(path)}>
                  <span class="mono">{f}</span>
                </button>
              </li>
            );
          })}
        </ul>
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            const name = creating.trim();
            if (!name) return;
            setOpen(join(dir, name));
            setCreating("");
          }}
        >
          <input placeholder="new-file.md" value={creating} onInput={(e) => setCreating((e.target as HTMLInputElement).value)} />
          <button type="submit" class="secondary">
            New file
          </button>
        </form>
      </Card>
      {open && (
        <Editor
          key={`${agentId}/${open}`}
          agentId={agentId}
          path={open}
          onSaved={listing.reload}
          onDeleted={() => {
            setOpen(null);
            listing.reload();
          }}
        />
      )}
    </div>
  );
}

type Conflict = { theirs: WorkspaceReadResult | null; mine: string };

function Editor({ agentId, path, onSaved, onDeleted }: { agentId: string; path: string; onSaved: () => void; onDeleted: () => void }) {
  const client = useClient();
  const [text, setText] = useState<string | null>(null);
  const [base, setBase] = useState<WorkspaceReadResult | null>(null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [act, state] = useAction();

  const file = useLoad(async () => {
    try {
      const f = await client.call("workspace.read", { path, agentId });
      setBase(f);
      setText(f.content);
      return f;
    } catch (e) {
      if (e instanceof RpcError && e.code === codes.NOT_FOUND) {
        setBase(null);
        setText("");
        return null;
      }
      throw e;
    }
  }, [client, path, agentId]);

  // A global skill read through skills/ is saved as the agent's own copy,
  // which has no version yet: that write is unconditional.
  const expectedEtag = base && base.resolvedSource !== "global" ? base.etag ?? undefined : undefined;

  const save = (content: string, etag: string | undefined) =>
    act(async () => {
      setSaved(null);
      try {
        const r = await client.call("workspace.write", { path, content, agentId, expectedEtag: etag });
        if (r.etag) {
          setBase({ path, content, size: r.size, etag: r.etag, lastModified: Date.now() });
        } else {
          // An unconditional write (a new file, a skill's first own copy)
          // answers no version: read the one it made.
          setBase(await client.call("workspace.read", { path, agentId }));
        }
        setConflict(null);
        setSaved(`Saved ${path} (${r.size} bytes).`);
        onSaved();
      } catch (e) {
        if (e instanceof RpcError && e.code === codes.CONFLICT) {
          const theirs = await client.call("workspace.read", { path, agentId }).catch(() => null);
          setConflict({ theirs, mine: content });
          return;
        }
        throw e;
      }
    });

  const dirty = text !== null && text !== (base?.content ?? "");

  return (
    <Card
      title={<span class="mono">{path}</span>}
      actions={
        base && (
          <button
            class="danger"
            disabled={state.busy}
            onClick={() =>
              void act(async () => {
                if (!confirm(`Delete ${path}?`)) return;
                await client.call("workspace.delete", { path, agentId });
                onDeleted();
              })
            }
          >
            Delete
          </button>
        )
      }
    >
      <ErrorNote error={file.error ?? state.error} />
      {base === null && text !== null && <p class="muted small">New file: saving creates it.</p>}
      {base && (
        <p class="muted small">
          {base.size} bytes{base.lastModified ? `, modified ${fmtTime(base.lastModified)}` : ""}
          {base.resolvedSource === "global" ? " — the global skill; saving makes the agent's own copy" : ""}
        </p>
      )}
      {conflict && (
        <div class="conflict" role="alert" id="conflict">
          <p>
            <strong>{path} changed since you opened it.</strong> Nothing was saved. Their version is below; yours is still in the editor.
          </p>
          <pre class="theirs">{conflict.theirs ? conflict.theirs.content : "(the file was deleted)"}</pre>
          <div class="row wrap">
            <button
              class="danger"
              onClick={() => void save(conflict.mine, conflict.theirs?.etag ?? undefined)}
              disabled={state.busy}
            >
              Overwrite with mine
            </button>
            <button
              class="secondary"
              onClick={() => {
                setBase(conflict.theirs);
                setText(conflict.theirs?.content ?? "");
                setConflict(null);
              }}
            >
              Discard mine, load theirs
            </button>
          </div>
        </div>
      )}
      {text !== null && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save(text, expectedEtag);
          }}
        >
          <textarea class="editor code" name="content" value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
          <div class="row">
            <button type="submit" id="save" disabled={state.busy || (!dirty && base !== null)}>
              Save
            </button>
            {dirty && <span class="muted small">unsaved changes</span>}
            {saved && !dirty && <span class="ok-note">{saved}</span>}
          </div>
        </form>
      )}
    </Card>
  );
}
