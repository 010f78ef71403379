// Runs a Worker under workerd (wrangler's local simulator) like
// `wrangler dev`, but without the DevTools inspector proxy: wrangler dev
// always attaches one, and it relays every inspector event (each chunk of
// every outbound fetch, each console call) to the wrangler process, keeps
// them in memory while no DevTools is attached, and leaves a socket behind
// for many of them — a gateway streaming model answers for hours runs out
// of file descriptors. Usage:
//   node scripts/serve.mjs --config FILE --port N [--ip IP] [--persist-to DIR] [--log-level L]
import { unstable_startWorker } from "wrangler";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const config = opt("--config");
if (!config) {
  console.error("usage: node scripts/serve.mjs --config FILE --port N [--ip IP] [--persist-to DIR] [--log-level L]");
  process.exit(2);
}
const worker = await unstable_startWorker({
  config,
  dev: {
    inspector: false,
    watch: false,
    server: { hostname: opt("--ip", "127.0.0.1"), port: Number(opt("--port", "8787")) },
    persist: opt("--persist-to", undefined),
    logLevel: opt("--log-level", "log"),
  },
});
await worker.ready;
const url = await worker.url;
console.error(`serving ${url.href}`);
const stop = async () => {
  await worker.dispose();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
