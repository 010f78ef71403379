// The gateway connection: protocol v1 over one WebSocket, as a `client`.
// Requests are typed by the generated method table (ClientMethods), so a
// method, its params and its result come from protocol/src, never from
// strings typed here. Reconnects with exponential backoff (1 s · 2^n, at
// most 30 s, with jitter) except after a refused token, which only a new
// token can fix.

import {
  CHAT_EVENT,
  PROTOCOL_VERSION,
  closeCodes,
  codes,
  type ChatEvent,
  type ClientMethods,
  type ConnectParams,
  type ErrorShape,
  type Frame,
  type HelloOkResult,
  type JsonValue,
} from "./protocol/generated";

export type MethodName = keyof ClientMethods;
export type Params<M extends MethodName> = ClientMethods[M]["params"];
export type Result<M extends MethodName> = ClientMethods[M]["result"];
/** Methods without params (`NoParams`, `null` on the wire) take no argument. */
type ParamArgs<M extends MethodName> = Params<M> extends null ? [] : [Params<M>];

/** A request the gateway answered with an error. */
export class RpcError extends Error {
  readonly code: number;
  readonly details: unknown;
  constructor(shape: ErrorShape) {
    super(shape.message);
    this.code = shape.code;
    this.details = shape.details;
  }
}

export type Status =
  | { kind: "connecting"; attempt: number }
  | { kind: "connected"; hello: HelloOkResult }
  /** The socket dropped after it had worked; trying again at `at`. */
  | { kind: "reconnecting"; at: number; attempt: number; reason: string }
  /** Never reached the gateway (yet); trying again at `at`. */
  | { kind: "unreachable"; at: number; attempt: number; reason: string }
  /** The token was refused: no retry until a new one is given. */
  | { kind: "unauthorized"; message: string }
  /** The gateway has no token configured and refuses everyone. */
  | { kind: "auth-not-configured"; message: string };

/** How long a request may wait for its answer. `tool.invoke` waits for a
 * node (up to the gateway's `timeouts.toolMs`), hence the margin. */
const REQUEST_TIMEOUT_MS = 150_000;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

/** The default gateway URL: this page's host, `/ws`. */
export function sameHostUrl(loc: Location = window.location): string {
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${loc.host}/ws`;
}

/** The backoff before attempt `n` (0-based), with ±20 % jitter. */
export function backoffMs(n: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** n);
  return Math.round(base * (0.8 + 0.4 * random()));
}

type Pending = {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
};

export class GatewayClient {
  private ws: WebSocket | null = null;
  private nextId = 0;
  private pending = new Map<string, Pending>();
  private attempt = 0;
  private everConnected = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  private chatListeners = new Set<(e: ChatEvent) => void>();
  private statusListeners = new Set<(s: Status) => void>();
  status: Status = { kind: "connecting", attempt: 0 };

  /** One id per page: a reconnect replaces this page's old socket on the
   * gateway, and another tab keeps its own. */
  private readonly clientId = `web-${randomHex(4)}`;

  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  /** Whether a handshake ever succeeded on this client. */
  get hasConnected(): boolean {
    return this.everConnected;
  }

  start(): void {
    this.closed = false;
    this.open();
  }

  /** Closes for good (logout, new settings). */
  stop(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.ws?.close(1000, "bye");
    this.ws = null;
    this.failPending("disconnected");
  }

  /** Tries again now instead of waiting out the backoff. */
  retryNow(): void {
    if (this.closed || this.status.kind === "connected") return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.open();
  }

  onStatus(f: (s: Status) => void): () => void {
    this.statusListeners.add(f);
    return () => this.statusListeners.delete(f);
  }

  onChat(f: (e: ChatEvent) => void): () => void {
    this.chatListeners.add(f);
    return () => this.chatListeners.delete(f);
  }

  call<M extends MethodName>(method: M, ...args: ParamArgs<M>): Promise<Result<M>> {
    const ws = this.ws;
    if (!ws || this.status.kind !== "connected") {
      return Promise.reject(new Error("Not connected to the gateway"));
    }
    return this.send(ws, method, args[0]) as Promise<Result<M>>;
  }

  private send(ws: WebSocket, method: string, params: unknown): Promise<unknown> {
    const id = `w${++this.nextId}`;
    const frame: Frame =
      params === undefined
        ? { type: "req", id, method }
        : { type: "req", id, method, params: params as JsonValue };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify(frame));
    });
  }

  private setStatus(s: Status): void {
    this.status = s;
    for (const f of this.statusListeners) f(s);
  }

  private open(): void {
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url);
    } catch (e) {
      // A malformed URL: retrying cannot help, but say so the same way.
      this.scheduleRetry(`Invalid gateway URL ${this.url}: ${(e as Error).message}`);
      return;
    }
    this.ws = ws;
    this.setStatus({ kind: "connecting", attempt: this.attempt });
    ws.onopen = () => {
      const params: ConnectParams = {
        minProtocol: PROTOCOL_VERSION,
        maxProtocol: PROTOCOL_VERSION,
        client: { id: this.clientId, version: "web", platform: "browser", mode: "client" },
        auth: { token: this.token },
      };
      this.send(ws, "connect", params).then(
        (hello) => {
          this.attempt = 0;
          this.everConnected = true;
          this.setStatus({ kind: "connected", hello: hello as HelloOkResult });
        },
        (e: Error) => {
          if (e instanceof RpcError && e.code === codes.UNAUTHORIZED) {
            this.refused(e.message);
          }
          // Other failures end with the socket's close, which retries.
        },
      );
    };
    ws.onmessage = (m) => this.receive(m.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.failPending("the connection to the gateway was lost");
      if (this.closed || this.status.kind === "unauthorized") return;
      if (ev.code === closeCodes.UNAUTHORIZED) {
        this.refused(ev.reason || "The gateway refused the token");
      } else if (ev.code === closeCodes.AUTH_NOT_CONFIGURED) {
        this.setStatus({
          kind: "auth-not-configured",
          message: ev.reason || "The gateway has no auth token configured",
        });
      } else {
        this.scheduleRetry(
          ev.reason ||
            (ev.code === 1006 ? "no connection (is the gateway running at this address?)" : `connection closed (code ${ev.code})`),
        );
      }
    };
  }

  private refused(message: string): void {
    this.closed = true;
    this.ws?.close();
    this.ws = null;
    this.setStatus({ kind: "unauthorized", message });
  }

  private scheduleRetry(reason: string): void {
    const delay = backoffMs(this.attempt);
    const at = Date.now() + delay;
    const kind = this.everConnected ? "reconnecting" : "unreachable";
    this.setStatus({ kind, at, attempt: this.attempt, reason });
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed) this.open();
    }, delay);
  }

  private failPending(why: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
      this.pending.delete(id);
    }
  }

  private receive(data: unknown): void {
    if (typeof data !== "string") return;
    let frame: Frame;
    try {
      frame = JSON.parse(data) as Frame;
    } catch {
      return;
    }
    if (frame.type === "res") {
      const p = frame.id === null ? undefined : this.pending.get(frame.id);
      if (!p || frame.id === null) return;
      this.pending.delete(frame.id);
      clearTimeout(p.timer);
      if (frame.ok) p.resolve(frame.payload ?? null);
      else p.reject(new RpcError(frame.error ?? { code: codes.INTERNAL, message: "error" }));
    } else if (frame.type === "evt" && frame.event === CHAT_EVENT && frame.payload) {
      const evt = frame.payload as unknown as ChatEvent;
      for (const f of this.chatListeners) f(evt);
    }
  }
}

function randomHex(bytes: number): string {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("");
}
