// What a Durable Object's SQLite write costs under workerd (Miniflare, as
// the bench runs it): a statement inside the implicit transaction, and the
// commit that ends it when the object waits on something. BENCHMARKS.md
// (session 25) explains why a turn's writes are counted in commits, not
// statements. Usage: node scripts/sql-commits.mjs [ITERATIONS]
// On Linux it also reports workerd's CPU time per iteration (/proc).
import { readFileSync, readdirSync } from "node:fs";
import { Miniflare } from "miniflare";

const script = `
import { DurableObject } from "cloudflare:workers";
export class Db extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS messages (idx INTEGER PRIMARY KEY, data TEXT)");
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS calls (seq INTEGER PRIMARY KEY, id TEXT)");
  }
  async fetch(request) {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n"));
    const mode = url.searchParams.get("mode");
    const sql = this.ctx.storage.sql;
    const data = "x".repeat(300);
    let idx = sql.exec("SELECT COALESCE(MAX(idx), 0) AS n FROM messages").one().n;
    const tick = () => new Promise((r) => setTimeout(r, 0));
    for (let i = 0; i < n; i++) {
      if (mode === "statement" || mode === "statementThenWait") {
        sql.exec("INSERT INTO messages (idx, data) VALUES (?, ?)", ++idx, data);
      }
      if (mode === "threeStatementsThenWait") {
        sql.exec("INSERT INTO messages (idx, data) VALUES (?, ?)", ++idx, data);
        sql.exec("INSERT INTO calls (seq, id) VALUES (0, ?)", "c" + i);
        sql.exec("DELETE FROM calls");
      }
      if (mode.endsWith("Wait")) await tick();
    }
    return new Response("ok");
  }
}
export default { fetch: (request, env) => env.DB.get(env.DB.idFromName("one")).fetch(request) };
`;

const n = Number(process.argv[2] ?? 1000);
const mf = new Miniflare({
  modules: true,
  script,
  compatibilityDate: "2025-01-01",
  durableObjects: { DB: { className: "Db", useSQLite: true } },
});
const url = await mf.ready;
const timed = async (mode, count) => {
  const start = performance.now();
  await (await fetch(`${url}?mode=${mode}&n=${count}`)).text();
  return performance.now() - start;
};
// User + system CPU of every workerd process, in microseconds (0 where
// /proc is missing): run it on an otherwise idle machine.
const workerdCpuUs = () => {
  let pids = [];
  try {
    pids = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  } catch {
    return 0;
  }
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes("(workerd)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks * 10_000; // USER_HZ is 100
};
const modes = ["statement", "wait", "statementThenWait", "threeStatementsThenWait"];
const perIteration = {};
const cpuPerIteration = {};
for (const mode of modes) {
  await timed(mode, Math.ceil(n / 10));
  const runs = [];
  const cpuBefore = workerdCpuUs();
  for (let i = 0; i < 5; i++) runs.push(await timed(mode, n));
  cpuPerIteration[mode] = (workerdCpuUs() - cpuBefore) / (5 * n);
  runs.sort((a, b) => a - b);
  perIteration[mode] = (runs[2] / n) * 1000;
}
await mf.dispose();
const us = (x) => Math.round(x * 100) / 100;
console.log(
  JSON.stringify(
    {
      iterations: n,
      usPerIteration: Object.fromEntries(modes.map((m) => [m, us(perIteration[m])])),
      usPerStatement: us(perIteration.statement),
      usPerCommit: us(perIteration.statementThenWait - perIteration.wait - perIteration.statement),
      workerdCpuUsPerIteration: Object.fromEntries(modes.map((m) => [m, us(cpuPerIteration[m])])),
    },
    null,
    2,
  ),
);
