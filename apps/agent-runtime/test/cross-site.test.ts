import { get as httpGet, request as httpRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime } from "./support/runtime.ts";

let fake: FakeModel;

/** A request with exactly these headers (fetch sets `sec-fetch-mode` itself). */
function rawRequest(url: string, headers: Record<string, string>, method = "GET"): Promise<IncomingMessage> {
  return new Promise((resolve, reject) =>
    httpRequest(url, { method, headers }, (res) => {
      res.resume();
      resolve(res);
    })
      .on("error", reject)
      .end(),
  );
}
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

/**
 * A loopback runtime has no credential of its own: a web page the person opens elsewhere can send
 * it requests a browser sends without asking first (a POST without a body, say).
 */
describe("requests another site's page makes to the runtime", () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime(fake);
  });
  afterAll(() => rt.close());

  const threadCount = async () =>
    ((await rt.json<{ items: unknown[] }>("GET", "/agents/threads?limit=100")).body.items ?? []).length;

  it("refuses a state change from another site with a 403 problem, before any route runs", async () => {
    const before = await threadCount();
    for (const headers of [
      { origin: "https://evil.example" },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "null" },
      { origin: `http://localhost:1` },
    ]) {
      const res = await fetch(`${rt.url}/agents/threads`, { method: "POST", headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(((await res.json()) as { detail: string }).detail).toMatch(/another site|is not this runtime's/);
    }
    const stop = await fetch(`${rt.url}/agents/threads/thr_x/stop`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
    });
    expect(stop.status).toBe(403);
    expect(await threadCount()).toBe(before);
  });

  it("serves its own page's requests, clients that send no Origin, plain reads and webhook senders", async () => {
    const own = await fetch(`${rt.url}/agents/threads`, {
      method: "POST",
      headers: { origin: rt.url, "sec-fetch-site": "same-origin" },
    });
    expect(own.status).toBe(201);
    expect((await fetch(`${rt.url}/agents/threads`, { method: "POST" })).status).toBe(201);
    expect((await fetch(`${rt.url}/agents/threads`)).status).toBe(200);
    expect((await fetch(`${rt.url}/agents/threads`, { headers: { origin: rt.url } })).status).toBe(200);
    // A sender's POST reaches the receiver, which answers for itself (here: it is off).
    const hook = await fetch(`${rt.url}/agents/webhooks/ci`, {
      method: "POST",
      headers: { origin: "https://ci.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(((await hook.json()) as { detail: string }).detail).toContain("receiver is disabled");
  });

  it("refuses a read another site's page makes, before the memory search calls the embedding model", async () => {
    await rt.runtime.deps.memory.add("Rotate the staging TLS certificate in March", "test");
    await rt.runtime.deps.memory.embedPending();
    const embeddings = fake.embeddingRequests.length;
    for (const headers of [
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" },
      { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" },
      // A navigation is served for the web UI's page alone.
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
    ] as Array<Record<string, string>>) {
      for (const method of ["GET", "HEAD"]) {
        const res = await rawRequest(`${rt.url}/agents/memory?q=certificate`, headers, method);
        expect(res.statusCode, `${method} ${JSON.stringify(headers)}`).toBe(403);
        expect(res.headers["content-type"]).toBe("application/problem+json");
      }
    }
    const refused = await fetch(`${rt.url}/agents/threads`, { headers: { "sec-fetch-site": "cross-site" } });
    expect(((await refused.json()) as { detail: string }).detail).toContain("another site (cross-site)");
    expect(fake.embeddingRequests.length).toBe(embeddings);
    // The runtime's own page, a typed address, and clients without Sec-Fetch headers still search.
    for (const headers of [
      { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" },
      { "sec-fetch-site": "none" },
      {},
    ] as Array<Record<string, string>>) {
      const res = await rt.request("GET", "/agents/memory?q=certificate", undefined, headers);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(((await res.json()) as { items: Array<{ text: string }> }).items[0]?.text).toContain("TLS certificate");
    }
    expect(fake.embeddingRequests.length).toBe(embeddings + 3);
  });

  it("refuses a read carrying another site's Origin from a browser that sends no Sec-Fetch headers", async () => {
    const embeddings = fake.embeddingRequests.length;
    for (const origin of ["https://evil.example", "null", "http://localhost:1"]) {
      for (const method of ["GET", "HEAD"]) {
        const res = await rawRequest(`${rt.url}/agents/memory?q=certificate`, { origin }, method);
        expect(res.statusCode, `${method} ${origin}`).toBe(403);
        expect(res.headers["content-type"]).toBe("application/problem+json");
      }
    }
    const refused = await fetch(`${rt.url}/agents/threads`, { headers: { origin: "https://evil.example" } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain(
      `"https://evil.example" is not this runtime's`,
    );
    expect(fake.embeddingRequests.length).toBe(embeddings);
    // The runtime's own page still reads, and a link from elsewhere still opens the web UI.
    expect((await rawRequest(`${rt.url}/agents/memory?q=certificate`, { origin: rt.url })).statusCode).toBe(200);
    expect(fake.embeddingRequests.length).toBe(embeddings + 1);
    const page = await rawRequest(`${rt.url}/`, { origin: "https://evil.example", "sec-fetch-mode": "navigate" });
    expect(page.statusCode).toBe(200);
  });

  it("opens its web UI from a link on another site, and serves nothing else to such a request", async () => {
    const navigate = { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" };
    const page = await rawRequest(`${rt.url}/`, navigate);
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    const embedded = await rawRequest(`${rt.url}/`, { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors" });
    expect(embedded.statusCode).toBe(403);
    expect((await rawRequest(`${rt.url}/health`, navigate)).statusCode).toBe(403);
    expect((await rawRequest(`${rt.url}/openapi.json`, { "sec-fetch-site": "same-site" })).statusCode).toBe(403);
  });

  it("answers its API with no-store and nosniff, and its page with the page's own cache policy", async () => {
    for (const path of ["/agents/threads", "/health", "/agents/nowhere"]) {
      const res = await fetch(`${rt.url}${path}`);
      expect(res.headers.get("cache-control"), path).toBe("no-store");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    expect((await fetch(`${rt.url}/`)).headers.get("cache-control")).toBe("no-cache");
    // The guards' refusals too: they answer before any route.
    const refused = await fetch(`${rt.url}/agents/threads`, {
      method: "POST",
      headers: { origin: "https://evil.example" },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("cache-control")).toBe("no-store");
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff");
    // fetch sends its own Host: a plain request carries the rebinding page's.
    const misdirected = await new Promise<IncomingMessage>((resolve, reject) =>
      httpGet(`${rt.url}/agents/threads`, { headers: { host: "evil.example" } }, (res) => {
        res.resume();
        resolve(res);
      }).on("error", reject),
    );
    expect(misdirected.statusCode).toBe(421);
    expect(misdirected.headers["cache-control"]).toBe("no-store");
    expect(misdirected.headers["x-content-type-options"]).toBe("nosniff");
  });

  it("serves its page at the address it is published at, behind a proxy that sends its own Host", async () => {
    const published = await startTestRuntime(fake, {
      env: { AGENT_HTTP_URL: "https://agent.example.com", AGENT_ALLOWED_HOSTS: "agent.internal:8443" },
    });
    try {
      const post = (origin: string) =>
        fetch(`${published.url}/agents/threads`, {
          method: "POST",
          headers: { origin, "sec-fetch-site": "same-origin" },
        });
      expect((await post("https://agent.example.com")).status).toBe(201);
      expect((await post("https://agent.internal:8443")).status).toBe(201);
      expect((await post("http://agent.example.com")).status).toBe(403);
      expect((await post("https://evil.agent.example.com")).status).toBe(403);
    } finally {
      await published.close();
    }
  });
});
