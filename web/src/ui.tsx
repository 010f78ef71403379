// Small pieces every tab uses: the client in context, a loader hook, an
// error line, times and JSON shown plainly.

import { createContext, type ComponentChildren } from "preact";
import { useCallback, useContext, useEffect, useRef, useState } from "preact/hooks";
import type { GatewayClient } from "./client";
import { RpcError } from "./client";

export const ClientContext = createContext<GatewayClient | null>(null);

export function useClient(): GatewayClient {
  const c = useContext(ClientContext);
  if (!c) throw new Error("no gateway client");
  return c;
}

export interface Loaded<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and whenever `deps` change or `reload()` is called,
 * while `enabled` (e.g. connected: what was loaded stays shown while the
 * connection is down); an answer that arrives after a newer load started
 * is dropped. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], enabled = true): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    if (!enabled) return;
    const mine = ++seq.current;
    setLoading(true);
    load().then(
      (v) => {
        if (mine !== seq.current) return;
        setData(v);
        setError(undefined);
        setLoading(false);
      },
      (e: Error) => {
        if (mine !== seq.current) return;
        setError(e);
        setLoading(false);
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick, enabled]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Runs an action, keeping its error and whether it is running. */
export function useAction(): [
  (f: () => Promise<unknown>) => Promise<boolean>,
  { busy: boolean; error: Error | undefined; clear: () => void },
] {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>(undefined);
  const run = useCallback(async (f: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await f();
      return true;
    } catch (e) {
      setError(e as Error);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return [run, { busy, error, clear: () => setError(undefined) }];
}

export function ErrorNote({ error, id }: { error: Error | undefined | null; id?: string }) {
  if (!error) return null;
  const code = error instanceof RpcError ? ` (code ${error.code})` : "";
  return (
    <p class="error" role="alert" id={id}>
      {error.message}
      {code}
    </p>
  );
}

export function Card({ title, children, actions }: { title: ComponentChildren; children?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{title}</h2>
        {actions && <div class="card-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export function fmtTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  return new Date(ms).toLocaleString();
}

export function fmtAgo(ms: number | null | undefined, now = Date.now()): string {
  if (ms === null || ms === undefined) return "—";
  const s = Math.round((now - ms) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const text =
    a < 60 ? `${a} s` : a < 3600 ? `${Math.round(a / 60)} min` : a < 86400 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** Reads a value typed by the user the way `gsv config set` does: JSON
 * when it parses, else the text itself. */
export function parseLooseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
