// The benchmark's floors, all in one run with the gateway:
// - a WebSocket message echoed by a trivial Durable Object (hibernation
//   API, like the Gateway);
// - "hop:…" messages: the same, plus one fetch() to a second Durable Object
//   (the cost of one object-to-object request, as Gateway → Session);
// - "rpc:…" messages: the same with a JS RPC call instead of fetch();
// - "llm:URL …" messages: one streamed model call from the object (an
//   OpenAI chat completion POSTed to URL, the SSE answer read whole);
// - "turn:URL …" messages: the least a turn must do in this design, in
//   plain JS: a fetch() to a second object, which stores the message in
//   SQLite, makes the streamed model call, stores the answer and returns
//   it, echoed back on the WebSocket;
// - "toolturn:URL …" messages: the least a turn with one native tool call
//   must do: the same, then the tool's file read from R2 and stored as its
//   result, and a second model call with it, whose answer is stored too;
// - "microtasks:MODE:N" messages: N microtasks one after another, each
//   queued by the one before with queueMicrotask or as a promise job
//   (MODE "then"): what the Rust Workers' choice of the two saves
//   (worker-start/).
import { DurableObject } from "cloudflare:workers";

// A minimal streamed OpenAI chat completion, read whole.
async function modelCall(url, text) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "floor", stream: true, messages: [{ role: "user", content: text }] }),
  });
  return await res.text();
}

// `n` chained microtasks, queued the way `mode` says; resolves to `n`.
function chainedJobs(mode, n) {
  const resolved = Promise.resolve();
  return new Promise((done) => {
    let count = 0;
    const step = () => (++count >= n ? done(count) : queue());
    const queue = mode === "then" ? () => void resolved.then(step) : () => queueMicrotask(step);
    queue();
  });
}

// "llm:URL rest" → [URL, rest].
function target(text) {
  const body = text.slice(text.indexOf(":") + 1);
  const space = body.indexOf(" ");
  return [body.slice(0, space), body.slice(space + 1)];
}

// About the size of the workspace's IDENTITY.md.
const IDENTITY = "# IDENTITY.md\n\n" + "- Name: the bench's agent, who reads this file in a tool turn.\n".repeat(5);

export class Echo extends DurableObject {
  async fetch(request) {
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }
  async webSocketMessage(ws, message) {
    const text = String(message);
    if (text.startsWith("llm:")) {
      const [url, rest] = target(text);
      ws.send(String((await modelCall(url, rest)).length));
      return;
    }
    if (text.startsWith("microtasks:")) {
      const [, mode, n] = text.split(":");
      ws.send(String(await chainedJobs(mode, Number(n))));
      return;
    }
    if (text.startsWith("turn:") || text.startsWith("toolturn:")) {
      const stub = this.env.BACK.get(this.env.BACK.idFromName("back"));
      const path = text.startsWith("turn:") ? "/turn" : "/toolturn";
      const res = await stub.fetch(`https://back${path}`, { method: "POST", body: text });
      ws.send(await res.text());
      return;
    }
    if (text.startsWith("hop:") || text.startsWith("rpc:")) {
      const stub = this.env.BACK.get(this.env.BACK.idFromName("back"));
      if (text.startsWith("rpc:")) {
        ws.send(await stub.echo(text));
      } else {
        const res = await stub.fetch("https://back/echo", { method: "POST", body: text });
        ws.send(await res.text());
      }
      return;
    }
    ws.send(message);
  }
  async webSocketClose(ws, code) {
    ws.close(code === 1005 ? 1000 : code, "closed");
  }
}

export class Back extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS messages (idx INTEGER PRIMARY KEY, data TEXT NOT NULL)");
  }
  echo(text) {
    return text;
  }
  async fetch(request) {
    const text = await request.text();
    const path = new URL(request.url).pathname;
    if (path !== "/turn" && path !== "/toolturn") return new Response(text);
    const [url, rest] = target(text);
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO messages (data) VALUES (?)", rest);
    let answer = await modelCall(url, rest);
    sql.exec("INSERT INTO messages (data) VALUES (?)", answer);
    if (path === "/toolturn") {
      const file = await this.readFile();
      sql.exec("INSERT INTO messages (data) VALUES (?)", file);
      answer = await modelCall(url, `${rest}\n${file}`);
      sql.exec("INSERT INTO messages (data) VALUES (?)", answer);
    }
    return new Response(answer);
  }
  // The file a native ReadFile reads, written on first use.
  async readFile() {
    const key = "agents/main/IDENTITY.md";
    let object = await this.env.STORAGE.get(key);
    if (object === null) {
      await this.env.STORAGE.put(key, IDENTITY);
      object = await this.env.STORAGE.get(key);
    }
    return await object.text();
  }
}

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/health") return new Response('{"status":"healthy"}');
    return env.ECHO.get(env.ECHO.idFromName("echo")).fetch(request);
  },
};
