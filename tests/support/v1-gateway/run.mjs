// Runs GSV v1's gateway bundle (wrangler deploy --dry-run output) under
// Miniflare on loopback; its model calls to api.anthropic.com go to a local
// fake LLM instead. Usage: node run.mjs BUNDLE_DIR PORT LLM_PORT PERSIST_DIR
import { Miniflare } from "miniflare";
const [dir, port, llmPort, persist] = process.argv.slice(2);
const mf = new Miniflare({
  modules: true,
  modulesRules: [{ type: "ESModule", include: ["**/*.js"] }],
  scriptPath: `${dir}/index.js`,
  modulesRoot: dir,
  compatibilityDate: "2026-01-28",
  compatibilityFlags: ["nodejs_compat"],
  durableObjects: {
    GATEWAY: { className: "Gateway", useSQLite: true },
    SESSION: { className: "Session", useSQLite: true },
  },
  r2Buckets: { STORAGE: "gsv-storage" },
  defaultPersistRoot: persist,
  host: "127.0.0.1",
  port: Number(port),
  outboundService: async (request) => {
    const url = new URL(request.url);
    if (url.hostname === "api.anthropic.com" || url.hostname === "api.openai.com") {
      const target = `http://127.0.0.1:${llmPort}${url.pathname}${url.search}`;
      const headers = new Headers(request.headers);
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      return fetch(target, { method: request.method, headers, body });
    }
    return new Response("no network in this run", { status: 502 });
  },
});
await mf.ready;
console.log(`serving http://127.0.0.1:${port}/`);
process.on("SIGTERM", async () => { await mf.dispose(); process.exit(0); });
