// A local double of the Workers AI binding (`env.AI`): a deployed gateway
// calls `env.AI.run(model, inputs)`, which runs on Cloudflare, so a local
// one is bound to this entrypoint instead (RPC over a service binding has
// the same call shape). `run` does what the binding does, through Workers
// AI's REST API (`POST /client/v4/accounts/{id}/ai/run/{model}`) at
// WORKERS_AI_URL, the test's fake: with `stream: true` it resolves to the
// answer's event stream, else to the `result`; a failure rejects with an
// Error carrying Workers AI's internal code and message, as the binding's
// do ("3040: No more data centers to forward the request to").
import { WorkerEntrypoint } from "cloudflare:workers";

export class AiBinding extends WorkerEntrypoint {
  async run(model, inputs, options = {}) {
    const base = this.env.WORKERS_AI_URL.replace(/\/$/, "");
    const url = `${base}/client/v4/accounts/${this.env.CLOUDFLARE_ACCOUNT_ID}/ai/run/${model}`;
    const resp = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${this.env.CLOUDFLARE_API_TOKEN}`,
        "content-type": "application/json",
      },
      body: JSON.stringify(inputs),
    });
    if (!resp.ok) {
      const text = await resp.text();
      let first = null;
      try { first = JSON.parse(text)?.errors?.[0] ?? null; } catch {}
      const error = new Error(first ? `${first.code}: ${first.message}` : `${resp.status}: ${text}`);
      error.name = "AiError";
      throw error;
    }
    if (inputs?.stream) return resp.body;
    return (await resp.json()).result;
  }
}

export default {
  async fetch() {
    return new Response("The AI binding double answers RPC calls only.", { status: 404 });
  },
};
