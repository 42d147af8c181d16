import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentplaneClient, ProblemError, retryAfterMs } from "../src/index.ts";

// A local server scripted per test: each request is answered by the next function in the queue.
type Answer = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let baseUrl = "";
let queue: Answer[] = [];
const seen: { method: string; at: number; auth: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", at: Date.now(), auth: req.headers.authorization, body });
      const next = queue.shift();
      if (next) next(req, res);
      else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const problem =
  (status: number, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}): Answer =>
  (_req, res) =>
    res
      .writeHead(status, { "content-type": "application/problem+json", ...headers })
      .end(JSON.stringify({ type: "https://agentplane.dev/problems/x", title: `T${status}`, status, ...extra }));

function reset(...answers: Answer[]) {
  queue = answers;
  seen.length = 0;
}

describe("retries", () => {
  it("waits out 429 Retry-After: 1 and 503 with an HTTP date, then succeeds", async () => {
    // The date is taken when the 503 is sent: two seconds ahead, at least one after truncation.
    reset(problem(429, { "retry-after": "1" }), (req, res) =>
      problem(503, { "retry-after": new Date(Date.now() + 2000).toUTCString() })(req, res),
    );
    const sdk = createAgentplaneClient({ baseUrl, token: "apl_test" });
    const started = Date.now();
    expect(await sdk.raw("GET", "/v1/orgs")).toEqual({ ok: true });
    expect(seen).toHaveLength(3);
    // Retry-After: 1 is a full second; the HTTP date has one-second precision, so at least ~1 s more.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(6000);
    expect(seen.every((s) => s.auth === "Bearer apl_test")).toBe(true);
  });

  it("does not retry a POST unless asked, and retries it with its body when asked", async () => {
    reset(problem(503));
    const plain = createAgentplaneClient({ baseUrl, retry: { baseDelayMs: 1 } });
    await expect(plain.raw("POST", "/v1/orgs", { body: { name: "a" } })).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);

    reset(problem(503), problem(502));
    const opted = createAgentplaneClient({ baseUrl, retry: { baseDelayMs: 1, nonIdempotent: true } });
    expect(await opted.raw("POST", "/v1/orgs", { body: { name: "a" } })).toEqual({ ok: true });
    expect(seen.map((s) => s.body)).toEqual(['{"name":"a"}', '{"name":"a"}', '{"name":"a"}']);
  });

  it("obeys x-should-retry: false and gives up after the retry budget", async () => {
    reset(problem(503, { "x-should-retry": "false" }));
    const sdk = createAgentplaneClient({ baseUrl, retry: { baseDelayMs: 1, retries: 2 } });
    await expect(sdk.raw("GET", "/x")).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);

    reset(problem(504), problem(504), problem(504), problem(504));
    await expect(sdk.raw("GET", "/x")).rejects.toMatchObject({ status: 504 });
    expect(seen).toHaveLength(3);
  });

  it("does not wait longer than the cap on total waiting", async () => {
    reset(problem(429, { "retry-after": "30" }));
    const sdk = createAgentplaneClient({ baseUrl, retry: { maxTotalWaitMs: 5000 } });
    const started = Date.now();
    await expect(sdk.raw("GET", "/x")).rejects.toMatchObject({ status: 429, slug: "x" });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("retries a connection reset on a GET", async () => {
    reset((req) => req.socket.destroy());
    const sdk = createAgentplaneClient({ baseUrl, retry: { baseDelayMs: 1 } });
    expect(await sdk.raw("GET", "/x")).toEqual({ ok: true });
    expect(seen).toHaveLength(2);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("3", now)).toBe(3000);
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:02 GMT", now)).toBe(2000);
    expect(retryAfterMs("soon", now)).toBeUndefined();
  });
});

describe("ProblemError", () => {
  it("carries status, type, slug, title, detail, requestId and errors", async () => {
    reset(
      problem(
        400,
        { "x-request-id": "req-1" },
        {
          type: "https://agentplane.dev/problems/validation-failed",
          title: "Validation Failed",
          detail: "name is required",
          errors: [{ pointer: "/body/name", message: "Required" }],
        },
      ),
    );
    const sdk = createAgentplaneClient({ baseUrl, retry: false });
    const error = await sdk.raw("POST", "/v1/orgs", { body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect(error).toMatchObject({
      status: 400,
      type: "https://agentplane.dev/problems/validation-failed",
      slug: "validation-failed",
      title: "Validation Failed",
      detail: "name is required",
      requestId: "req-1",
      errors: [{ pointer: "/body/name", message: "Required" }],
    });
  });

  it("turns a non-JSON error page into a problem with the text as detail", async () => {
    reset((_req, res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>bad gateway</h1>"));
    const sdk = createAgentplaneClient({ baseUrl, retry: false });
    await expect(sdk.raw("GET", "/x")).rejects.toMatchObject({
      status: 502,
      slug: "http-502",
      detail: "<h1>bad gateway</h1>",
    });
  });
});
