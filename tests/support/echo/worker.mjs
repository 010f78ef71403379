// The benchmark's floor: a WebSocket echoed by a trivial Durable Object
// (hibernation API, like the Gateway), with nothing else on the path.
import { DurableObject } from "cloudflare:workers";

export class Echo extends DurableObject {
  async fetch(request) {
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }
  async webSocketMessage(ws, message) {
    ws.send(message);
  }
  async webSocketClose(ws, code) {
    ws.close(code === 1005 ? 1000 : code, "closed");
  }
}

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/health") return new Response('{"status":"healthy"}');
    return env.ECHO.get(env.ECHO.idFromName("echo")).fetch(request);
  },
};
