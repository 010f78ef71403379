// The benchmark's floors, all in one run with the gateway:
// - a WebSocket message echoed by a trivial Durable Object (hibernation
//   API, like the Gateway);
// - "hop:…" messages: the same, plus one fetch() to a second Durable Object
//   (the cost of one object-to-object request, as Gateway → Session);
// - "rpc:…" messages: the same with a JS RPC call instead of fetch().
import { DurableObject } from "cloudflare:workers";

export class Echo extends DurableObject {
  async fetch(request) {
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }
  async webSocketMessage(ws, message) {
    const text = String(message);
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
  echo(text) {
    return text;
  }
  async fetch(request) {
    return new Response(await request.text());
  }
}

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/health") return new Response('{"status":"healthy"}');
    return env.ECHO.get(env.ECHO.idFromName("echo")).fetch(request);
  },
};
