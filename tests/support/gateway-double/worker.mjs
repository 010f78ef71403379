// A stand-in for the gateway Worker (`gsv`) in channel tests: it forwards
// every request it gets through a service binding, unchanged, to the test's
// recording server at RECORD_URL, and answers with that server's reply.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const target = env.RECORD_URL.replace(/\/$/, "") + url.pathname + url.search;
    return fetch(target, {
      method: request.method,
      headers: request.headers,
      body: request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer(),
    });
  },
};
