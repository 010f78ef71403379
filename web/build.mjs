// Bundles the web UI into web/dist (Workers static assets, see [assets] in
// wrangler.toml) with the esbuild the project pins: one JS and one CSS
// file named by their content hash, index.html pointing at them, and
// _headers (a strict Content-Security-Policy, long caching for the hashed
// files). Fails when the JS + CSS are over the budget, gzipped.
// Run by scripts/build-web.sh after the protocol types are generated and
// type-checked. Usage: node web/build.mjs
import * as esbuild from "esbuild";
import { gzipSync } from "node:zlib";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "dist");
export const BUDGET_BYTES = 250 * 1024;

rmSync(dist, { recursive: true, force: true });
mkdirSync(path.join(dist, "assets"), { recursive: true });

const result = await esbuild.build({
  entryPoints: [path.join(here, "src", "main.tsx")],
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: path.join(dist, "assets"),
  entryNames: "app-[hash]",
  assetNames: "[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((p) => path.resolve(p));
const js = outputs.find((p) => p.endsWith(".js"));
const css = outputs.find((p) => p.endsWith(".css"));
if (!js || !css) throw new Error(`expected one .js and one .css output, got ${outputs.join(", ")}`);
const rel = (p) => path.relative(dist, p).split(path.sep).join("/");

const html = readFileSync(path.join(here, "index.html"), "utf8").replace("%JS%", rel(js)).replace("%CSS%", rel(css));
writeFileSync(path.join(dist, "index.html"), html);

// The page runs only its own script; a model's markdown is sanitized
// before it reaches the DOM, and this stops anything that slipped through.
// connect-src allows another gateway's socket (the login screen's URL).
const csp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self' ws: wss:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join("; ");
writeFileSync(
  path.join(dist, "_headers"),
  [
    "/*",
    `  Content-Security-Policy: ${csp}`,
    "  X-Content-Type-Options: nosniff",
    "  Referrer-Policy: no-referrer",
    "/assets/*",
    "  Cache-Control: public, max-age=31536000, immutable",
    "",
  ].join("\n"),
);

const sizes = {};
let total = 0;
for (const file of [js, css, path.join(dist, "index.html")]) {
  const gz = gzipSync(readFileSync(file), { level: 9 }).length;
  sizes[rel(file)] = gz;
  total += gz;
}
writeFileSync(path.join(dist, "size.json"), JSON.stringify({ gzipBytes: sizes, totalGzipBytes: total, budgetBytes: BUDGET_BYTES }, null, 2) + "\n");
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.error(`[web] ${Object.entries(sizes).map(([f, n]) => `${f} ${kb(n)}`).join(", ")}; total ${kb(total)} gzipped (budget ${kb(BUDGET_BYTES)})`);
if (total > BUDGET_BYTES) {
  console.error(`[web] the UI is over its budget: ${kb(total)} > ${kb(BUDGET_BYTES)} gzipped`);
  process.exit(1);
}
