// Runs a Worker under workerd (wrangler's local simulator) like
// `wrangler dev`, but without the DevTools inspector proxy: wrangler dev
// always attaches one, and it relays every inspector event (each chunk of
// every outbound fetch, each console call) to the wrangler process, keeps
// them in memory while no DevTools is attached, and leaves a socket behind
// for many of them — a gateway streaming model answers for hours runs out
// of file descriptors. Usage:
//   node scripts/serve.mjs --config FILE [--config FILE ...] --port N [--ip IP] [--persist-to DIR] [--log-level L] [--test-scheduled]
//                          [--expose WORKER=PORT ...]
//
// GSV_INSPECTOR_PORT=N (environment) opens workerd's own inspector on N for
// the `gsv` Worker (scripts/profile.mjs takes CPU profiles through it). It
// is workerd's, not wrangler dev's proxy, and only when asked.
//
// --test-scheduled serves `/cdn-cgi/handler/scheduled`, which runs the
// first Worker's cron trigger (the tests use it; a local gateway has no
// other way to see one).
//
// With several --config, one workerd runs them all (the first is served on
// the port; the others are reachable through their service bindings, by
// worker name, and on a port of their own when --expose names them: the
// WhatsApp channel's webhook, which Meta calls directly). wrangler's own
// multi-config mode (`wrangler dev -c a -c b`) brings the inspector back and its controllers are not exported, so this
// builds one Miniflare from each config's Miniflare options (the same
// conversion wrangler does: bindings, Durable Objects, .dev.vars, module
// rules), which also needs no dev registry shared with other processes.
import { unstable_startWorker, unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { Miniflare, Log, LogLevel } from "miniflare";
import path from "node:path";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
};
const configs = args.flatMap((a, i) => (a === "--config" && i + 1 < args.length ? [args[i + 1]] : []));
// WORKER=PORT: that worker also listens on PORT (multi-config runs only).
const exposed = Object.fromEntries(
  args.flatMap((a, i) => (a === "--expose" && i + 1 < args.length ? [args[i + 1].split("=")] : [])),
);
if (configs.length === 0) {
  console.error("usage: node scripts/serve.mjs --config FILE [--config FILE ...] --port N [--ip IP] [--persist-to DIR] [--log-level L] [--test-scheduled] [--expose WORKER=PORT ...]");
  process.exit(2);
}
const hostname = opt("--ip", "127.0.0.1");
const port = Number(opt("--port", "8787"));
const persist = opt("--persist-to", undefined);
const logLevel = opt("--log-level", "log");
const testScheduled = args.includes("--test-scheduled");

const stopWith = (dispose) => {
  const stop = async () => {
    await dispose();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
};

// The inspector, when asked for, is opened only for the gateway (`gsv`):
// the bench's other workerd (the echo worker) runs beside it.
const inspectorPort = Number(process.env.GSV_INSPECTOR_PORT) || undefined;
const wantsInspector = inspectorPort && unstable_readConfig({ config: configs[0] }).name === "gsv";

if (configs.length === 1 && !wantsInspector) {
  const worker = await unstable_startWorker({
    config: configs[0],
    dev: {
      inspector: false,
      watch: false,
      server: { hostname, port },
      persist,
      logLevel,
      testScheduled,
    },
  });
  await worker.ready;
  const url = await worker.url;
  console.error(`serving ${url.href}`);
  stopWith(() => worker.dispose());
} else {
  const workers = configs.map((file) => {
    const config = unstable_readConfig({ config: file });
    const { workerOptions, main } = unstable_getMiniflareWorkerOptions(config);
    const scriptPath = path.resolve(path.dirname(file), main ?? config.main);
    const direct = exposed[config.name];
    return {
      ...workerOptions,
      ...(direct ? { unsafeDirectSockets: [{ host: hostname, port: Number(direct) }] } : {}),
      name: config.name,
      modules: true,
      scriptPath,
      modulesRoot: path.dirname(scriptPath),
    };
  });
  const levels = { debug: LogLevel.DEBUG, info: LogLevel.INFO, log: LogLevel.INFO, warn: LogLevel.WARN, error: LogLevel.ERROR, none: LogLevel.NONE };
  const mf = new Miniflare({
    workers,
    host: hostname,
    port,
    log: new Log(levels[logLevel] ?? LogLevel.INFO),
    unsafeTriggerHandlers: testScheduled,
    ...(wantsInspector ? { inspectorPort } : {}),
    ...(persist ? { defaultPersistRoot: path.resolve(persist) } : {}),
  });
  const url = await mf.ready;
  console.error(`serving ${url.href} (${workers.map((w) => w.name).join(", ")})`);
  for (const name of Object.keys(exposed)) {
    console.error(`serving ${name} at ${(await mf.unsafeGetDirectURL(name)).href}`);
  }
  stopWith(() => mf.dispose());
}
