// Bench helper: an OTLP/HTTP collector in a process of its own, so that receiving the exports
// costs the load generator nothing. It answers every POST with 200 `{}` at once and counts what
// it received. GET /__count answers { requests, bytes, spans } (spans counted in JSON trace
// exports by their span ids, without parsing the rest). Prints its URL.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const seen = { requests: 0, bytes: 0, spans: 0 };
const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/__count") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen));
    return;
  }
  const traces = req.url === "/v1/traces";
  let tail = "";
  req.on("data", (chunk: Buffer) => {
    seen.bytes += chunk.length;
    if (!traces) return;
    const text = tail + chunk.toString("latin1");
    seen.spans += text.split('"spanId"').length - 1;
    tail = text.slice(-8);
  });
  req.on("end", () => {
    seen.requests += 1;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
