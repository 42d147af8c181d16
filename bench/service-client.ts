// The service client's cost per call (CPU time of client and a local server in one process), as the
// gateway's distributed dispatch pays it: httpFetch (undici.request) against the undici fetch it
// replaced, measured in the same run. Run: npm run bench -- service-client
import { createServer } from "node:http";
import { httpFetch } from "@agentplane/service-kit";
import { Agent, fetch as undiciFetch } from "undici";

const server = createServer((req, res) => {
  req.resume();
  res.setHeader("content-type", "application/json");
  res.end(JSON.stringify({ type: "user", id: "usr_1", displayName: "Ada", orgs: [{ id: "org_1", role: "owner" }] }));
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128, pipelining: 1 });
// The baseline: the former httpFetch, undici's fetch over the same pool settings.
const viaFetch = async (request: Request) => {
  const url = new URL(request.url);
  return (await undiciFetch(new URL(url.pathname + url.search, base), {
    method: request.method,
    headers: request.headers,
    redirect: "manual",
    dispatcher: agent,
    signal: request.signal,
  } as never)) as unknown as Response;
};
const viaRequest = httpFetch(base);
const headers = {
  "x-agentplane-identity": "a".repeat(400),
  "x-request-id": "r1",
  accept: "application/json",
  "user-agent": "bench",
};

async function round(fetchImpl: (r: Request) => Promise<Response>, n: number, concurrency: number) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const res = await fetchImpl(new Request(`http://svc/v1/auth/me`, { headers }));
        // What the gateway does to a service's response: add its own headers, then read it out.
        try {
          res.headers.set("x-request-id", "r1");
        } catch {
          // fetch's response headers are immutable: the gateway had to copy the response.
          const copy = new Response(res.body, res);
          copy.headers.set("x-request-id", "r1");
          await copy.arrayBuffer();
          continue;
        }
        await res.arrayBuffer();
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { cpuUsPerReq: (cpu.user + cpu.system) / n, wallMs: performance.now() - t0 };
}
const N = 3000;
const results: Record<string, number[]> = { fetch: [], request: [] };
await round(viaFetch, 500, 10);
await round(viaRequest, 500, 10);
for (let i = 0; i < 4; i++) {
  results.fetch!.push((await round(viaFetch, N, 10)).cpuUsPerReq);
  results.request!.push((await round(viaRequest, N, 10)).cpuUsPerReq);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
console.log(`CPU per request (client + local server, same process), median of 4 rounds of ${N} at 10 concurrent:`);
console.log(
  `  undici fetch + header copy: ${med(results.fetch!).toFixed(0)} µs   rounds ${results.fetch!.map((v) => v.toFixed(0)).join(", ")}`,
);
console.log(
  `  undici request (httpFetch): ${med(results.request!).toFixed(0)} µs   rounds ${results.request!.map((v) => v.toFixed(0)).join(", ")}`,
);
console.log(`  ratio httpFetch/fetch ${(med(results.request!) / med(results.fetch!)).toFixed(2)}x CPU per call`);
server.close();
process.exit(0);
