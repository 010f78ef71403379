// Takes a CPU profile of the gateway's isolate through workerd's inspector
// (scripts/serve.mjs opens it when GSV_INSPECTOR_PORT is set) until it is
// sent SIGINT or SIGTERM, then writes the profile for DevTools and prints
// a summary as JSON: the functions with the most self time, the time
// under each of the Worker's entry points (the Gateway object, the Session
// object, …), and the Gateway object's own work. The bench runs it around
// its turns (`--profile DIR`). Usage:
//   node scripts/profile.mjs --port N --out FILE.cpuprofile [--top 40] [--interval-us 100]
import { writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const port = Number(opt("--port", "9229"));
const out = opt("--out", "gateway.cpuprofile");
const top = Number(opt("--top", "40"));
const intervalUs = Number(opt("--interval-us", "100"));

// Node 20 has no WebSocket without a flag; `ws` comes with wrangler.
const WebSocketImpl = globalThis.WebSocket ?? (await import("ws")).default;

const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const target = targets.find((t) => /gsv/.test(`${t.title} ${t.url}`)) ?? targets[0];
if (!target) {
  console.error("profile: the inspector lists no target");
  process.exit(1);
}
const ws = new WebSocketImpl(target.webSocketDebuggerUrl);
await new Promise((ok, fail) => {
  ws.onopen = ok;
  ws.onerror = fail;
});
let nextId = 1;
const waiting = new Map();
ws.onmessage = (m) => {
  const msg = JSON.parse(typeof m.data === "string" ? m.data : m.data.toString());
  const done = msg.id && waiting.get(msg.id);
  if (done) {
    waiting.delete(msg.id);
    msg.error ? done.fail(new Error(JSON.stringify(msg.error))) : done.ok(msg.result);
  }
};
const call = (method, params = {}) =>
  new Promise((ok, fail) => {
    const id = nextId++;
    waiting.set(id, { ok, fail });
    ws.send(JSON.stringify({ id, method, params }));
  });

await call("Profiler.enable");
await call("Profiler.setSamplingInterval", { interval: intervalUs });
await call("Profiler.start");
console.error(`profile: recording ${target.title || target.url}`);

const stop = async () => {
  const { profile } = await call("Profiler.stop");
  writeFileSync(out, JSON.stringify(profile));
  console.log(JSON.stringify(summary(profile), null, 1));
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

// Self time per function and inclusive time under each entry point.
function summary(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    const dt = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
  }
  const name = (n) => {
    const f = n.callFrame;
    return f.functionName || (f.url ? `(anonymous ${f.url.split("/").pop()}:${f.lineNumber})` : "(anonymous)");
  };
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const idleUs = [...selfUs].filter(([id]) => ["(idle)", "(program)"].includes(name(byId.get(id)))).reduce((a, [, v]) => a + v, 0);
  const self = new Map();
  const entries = new Map();
  // Entry points: the Worker's exported handlers as workers-rs names them.
  const entry = /^(Gateway|Session|MemoryIndex)::|fetch|webSocketMessage|alarm/;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    self.set(name(n), (self.get(name(n)) ?? 0) + us);
    const seen = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const pn = name(byId.get(p));
      if (entry.test(pn) && !seen.has(pn)) {
        seen.add(pn);
        entries.set(pn, (entries.get(pn) ?? 0) + us);
      }
    }
  }
  // The Gateway object's own work (its code on the stack, a Session's
  // not): the `chat` events it fans out, and everything else, chiefly
  // the frames it takes and forwards. Names come with a profiling build.
  const gateway = { framesUs: 0, chatEventsUs: 0 };
  const fanOut = /deliver_chat_event|route_chat_event|agent_run_event|may_follow/;
  for (const [id, us] of selfUs) {
    if (["(idle)", "(program)", "(garbage collector)"].includes(name(byId.get(id)))) continue;
    let ours = false, session = false, events = false;
    for (let p = id; p !== undefined; p = parent.get(p)) {
      const pn = name(byId.get(p));
      ours ||= pn.includes("gateway_do");
      session ||= pn.includes("session_do");
      events ||= fanOut.test(pn);
    }
    if (ours && !session) gateway[events ? "chatEventsUs" : "framesUs"] += us;
  }
  const ms = (us) => Math.round(us / 10) / 100;
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    sampledMs: ms(totalUs),
    busyMs: ms(totalUs - idleUs),
    topSelf: sorted(self).slice(0, top).map(([fn, us]) => ({ fn, ms: ms(us), pct: Math.round((1000 * us) / Math.max(1, totalUs - idleUs)) / 10 })),
    entryPoints: sorted(entries).slice(0, top).map(([fn, us]) => ({ fn, ms: ms(us) })),
    // null from a build without names (nothing to tell the objects apart by).
    gatewayObject: profile.nodes.some((n) => name(n).includes("gsv_gateway"))
      ? { framesMs: ms(gateway.framesUs), chatEventsMs: ms(gateway.chatEventsUs) }
      : null,
  };
}
