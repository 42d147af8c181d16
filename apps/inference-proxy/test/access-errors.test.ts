import { request as httpRequest } from "node:http";
import { requirePostgres } from "@agentplane/testkit";
import { AnthropicBedrock } from "@anthropic-ai/bedrock-sdk";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();
const MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const body = { anthropic_version: "bedrock-2023-05-31", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

/** A request with the path exactly as written (fetch would normalize dot segments away). */
function rawPost(base: string, path: string, token: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        hostname,
        port,
        path,
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      },
      (res) => {
        let text = "";
        res.on("data", (c) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe.skipIf(!pg.available)(`access, project resolution and bad input${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform(
      { cloudA: { kind: "bearer", token: CREDS.bearer }, cloudAEndpointUrl: up.url },
      { maxBodyBytes: 64 * 1024 },
    );
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const invoke = (path: string, token: string, payload: unknown = body) =>
    h.call("POST", path, { token, body: payload });
  const short = `/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(MODEL)}/invoke`;

  it("short form: a project token and an org admin with one project both resolve the project", async () => {
    expect((await invoke(short, h.projectToken)).status).toBe(200);
    expect((await invoke(short, h.adminToken)).status).toBe(200);
  });

  it("short form with several projects visible: 400 naming the project form; the project form works", async () => {
    const res = await invoke(short, h.ownerToken);
    expect(res.status).toBe(400);
    expect(String(res.body.detail)).toContain("/v1/projects/{projectId}/llm/");
    const long = `/v1/projects/${h.projectId}/llm/cloud-a/us-east-1/model/${encodeURIComponent(MODEL)}/invoke`;
    expect((await invoke(long, h.ownerToken)).status).toBe(200);
  });

  it("GET /v1/inference/providers with several projects: 400 pointing at ?projectId=, which works", async () => {
    const res = await h.call("GET", "/v1/inference/providers", { token: h.ownerToken });
    expect(res.status).toBe(400);
    expect(String(res.body.detail)).toContain("?projectId=");
    expect(String(res.body.detail)).not.toContain("/llm/");
    const named = await h.call("GET", `/v1/inference/providers?projectId=${h.projectId}`, { token: h.ownerToken });
    expect(named.status).toBe(200);
  });

  it("another organization's project answers 404, and so does a project token on another project", async () => {
    const long = (p: string) => `/v1/projects/${p}/llm/cloud-a/us-east-1/model/${encodeURIComponent(MODEL)}/invoke`;
    const seen = up.seen.length;
    expect((await invoke(long(h.projectId), h.otherToken)).status).toBe(404);
    expect((await invoke(long(h.otherProjectId), h.projectToken)).status).toBe(404);
    expect((await invoke(short, "")).status).toBe(401);
    expect(up.seen.length).toBe(seen);
  });

  it("unknown provider or family 404, a region that is not one 400, missing credential 503 naming the variables", async () => {
    expect((await invoke("/v1/llm/cloud-z/us-east-1/x", h.projectToken)).status).toBe(404);
    expect((await invoke("/v1/llm/cloud-b/family-9/anthropic/v1/messages", h.projectToken)).status).toBe(404);
    const region = await invoke("/v1/llm/cloud-a/not_a_region/model/x/invoke", h.projectToken);
    expect(region.status).toBe(400);
    expect(region.body.errors).toEqual([{ pointer: "/path/region", message: expect.any(String) }]);
    const missing = await invoke("/v1/llm/cloud-b/family-1/anthropic/v1/messages", h.projectToken);
    expect(missing.status).toBe(503);
    expect(String(missing.body.detail)).toMatch(/cloud-b.*CLOUD_B_API_KEY/);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    expect(missing.headers.get("x-should-retry")).toBe("false");
  });

  it("a missing credential is reported to an SDK client at once, without its retries", async () => {
    let calls = 0;
    const client = new Anthropic({
      baseURL: `${h.url}/v1/llm/cloud-b/family-1/anthropic`,
      apiKey: h.projectToken,
      maxRetries: 2,
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const failure = await client.messages
      .create({ model: "claude-haiku-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect((failure as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    expect(calls).toBe(1);
  });

  it("paths that try to leave the provider's API are refused and never forwarded", async () => {
    const seen = up.seen.length;
    for (const path of [
      "/v1/llm/cloud-a/us-east-1/model/../../../admin",
      "/v1/llm/cloud-a/us-east-1/model%2F..%2Fadmin/invoke",
      "/v1/llm/cloud-a/us-east-1/http://evil.example/x",
      "/v1/llm/cloud-a/us-east-1//evil.example/x",
      "/v1/llm/cloud-a/us-east-1/model\\..\\x",
    ]) {
      const res = await rawPost(h.url, path, h.projectToken);
      expect([400, 404], `${path} → ${res.status} ${res.body}`).toContain(res.status);
    }
    expect(up.seen.slice(seen).map((s) => s.path)).toEqual([]);
    // Encoded dot segments are resolved by the server's URL parsing before routing, so what is left
    // is a plain path below the same provider prefix (`/model/%2e%2e/x` is `/x`): not a model call.
    const dots = await rawPost(h.url, "/v1/llm/cloud-a/us-east-1/model/%2e%2e/x", h.projectToken);
    expect(dots.status).toBe(404);
    expect(up.seen.slice(seen).map((s) => s.path)).toEqual([]);
  });

  it("a body over the configured cap answers 413", async () => {
    const big = { ...body, messages: [{ role: "user", content: "x".repeat(70 * 1024) }] };
    const res = await invoke(short, h.projectToken, big);
    expect(res.status).toBe(413);
  });

  it("GET /v1/inference/providers lists each provider's source and usability, never a secret", async () => {
    const res = await h.call<{ projectId: string; items: Record<string, unknown>[] }>(
      "GET",
      "/v1/inference/providers",
      { token: h.projectToken },
    );
    expect(res.status).toBe(200);
    expect(res.body.projectId).toBe(h.projectId);
    const byName = Object.fromEntries(res.body.items.map((p) => [p.name, p]));
    expect(byName["cloud-a"]).toMatchObject({
      usable: true,
      authMode: "bearer",
      credentialSource: "installation",
      endpointHost: new URL(up.url).host,
      regions: ["us-east-1"],
    });
    expect(byName["cloud-a-alt"]).toMatchObject({ usable: true, authMode: "x-api-key" });
    expect(byName["cloud-b"]).toMatchObject({ usable: false, credentialSource: "none" });
    expect(String(byName["cloud-b"]?.reason)).toContain("CLOUD_B_API_KEY");
    expect(JSON.stringify(res.body)).not.toContain(CREDS.bearer);
  });
});

describe.skipIf(!pg.available)(`SigV4 upstream auth${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream({ sigv4: true, region: "eu-west-1" });
    h = await startInferencePlatform({
      cloudA: {
        kind: "sigv4",
        accessKeyId: CREDS.accessKeyId,
        secretAccessKey: CREDS.secretAccessKey,
        sessionToken: CREDS.sessionToken,
      },
      cloudAEndpointUrl: up.url,
    });
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  it("signs the exact bytes forwarded (with the session token); the upstream verifies every request", async () => {
    const client = new AnthropicBedrock({
      baseURL: `${h.url}/v1/llm/cloud-a/eu-west-1`,
      awsRegion: "eu-west-1",
      apiKey: h.projectToken,
    });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const text: string[] = [];
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: "user", content: "hé ✓" }],
    });
    stream.on("text", (t) => text.push(t));
    await stream.finalMessage();
    expect(text.join("")).toBe("Hello from upstream");
    expect(up.seen.map((s) => s.auth)).toEqual(["sigv4", "sigv4"]);
    expect(up.rejected).toBe(0);
    for (const s of up.seen) expect(JSON.stringify(s.headers)).not.toContain(h.projectToken);
  });
});
