import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();

interface ProviderInfo {
  name: string;
  usable: boolean;
  credentialSource: string;
  credentialId?: string;
  authMode: string;
}

const message = { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
const invokeBody = {
  anthropic_version: "bedrock-2023-05-31",
  max_tokens: 10,
  messages: [{ role: "user", content: "hi" }],
};

// The real governance service of the all-in-one platform stores the credentials; the fake
// providers accept only CREDS, so a call succeeds only with the project's own credential.
describe.skipIf(!pg.available)(`project credentials override the installation's providers${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform({
      // The installation's cloud-b key is one the provider refuses; it has no cloud-a credential.
      cloudBKey: "installation-key-the-provider-refuses",
      cloudBBaseUrl: `${up.url}/anthropic/v1`,
      cloudAEndpointUrl: up.url,
      cloudAAltBaseUrl: `${up.url}/anthropic`,
    });
    const create = async (body: Record<string, string>) => {
      const r = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/credentials`, {
        token: h.adminToken,
        body,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id;
    };
    ids.cloudB = await create({ name: "foundry", kind: "cloud-b-key", resourceName: "acme-ai", key: CREDS.cloudBKey });
    ids.cloudA = await create({ name: "bedrock", kind: "cloud-a-bearer", token: CREDS.bearer });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  it("lists the project's credential as the source of the providers it overrides", async () => {
    const mine = await h.call<{ items: ProviderInfo[] }>("GET", "/v1/inference/providers", { token: h.projectToken });
    expect(mine.status).toBe(200);
    const by = (name: string) => mine.body.items.find((p) => p.name === name);
    expect(by("cloud-b")).toMatchObject({
      usable: true,
      credentialSource: "project-credential",
      credentialId: ids.cloudB,
    });
    expect(by("cloud-a")).toMatchObject({
      usable: true,
      authMode: "bearer",
      credentialSource: "project-credential",
      credentialId: ids.cloudA,
    });
    expect(by("cloud-a-alt")).toMatchObject({ usable: true, credentialId: ids.cloudA });
    expect(JSON.stringify(mine.body)).not.toContain(CREDS.cloudBKey);
    expect(JSON.stringify(mine.body)).not.toContain(CREDS.bearer);

    // Another organization's project has no credential of its own: the installation's apply.
    const theirs = await h.call<{ items: ProviderInfo[] }>("GET", "/v1/inference/providers", { token: h.otherToken });
    const other = (name: string) => theirs.body.items.find((p) => p.name === name);
    expect(other("cloud-b")).toMatchObject({ usable: true, credentialSource: "installation" });
    expect(other("cloud-b")?.credentialId).toBeUndefined();
    expect(other("cloud-a")).toMatchObject({ usable: false, credentialSource: "none" });
  });

  it("forwards with the project's credential, and with the installation's elsewhere", async () => {
    const seen = up.seen.length;
    const ok = await h.call("POST", "/v1/llm/cloud-b/family-1/anthropic/v1/messages", {
      token: h.projectToken,
      body: message,
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(up.seen[seen]).toMatchObject({ auth: "x-api-key" });
    expect(up.seen[seen]?.headers["x-api-key"]).toBe(CREDS.cloudBKey);

    const bedrock = await h.call("POST", "/v1/llm/cloud-a/us-east-1/model/anthropic.claude-haiku-4-5/invoke", {
      token: h.projectToken,
      body: invokeBody,
    });
    expect(bedrock.status, JSON.stringify(bedrock.body)).toBe(200);
    expect(up.seen.at(-1)).toMatchObject({ auth: "bearer" });
    const alt = await h.call("POST", "/v1/llm/cloud-a-alt/family-1/us-east-1/anthropic/v1/messages", {
      token: h.projectToken,
      body: message,
    });
    expect(alt.status, JSON.stringify(alt.body)).toBe(200);
    expect(up.seen.at(-1)?.headers["x-api-key"]).toBe(CREDS.bearer);

    // The other organization's call goes out with the installation's key, which the provider refuses.
    const before = up.seen.length;
    const refused = await h.call("POST", "/v1/llm/cloud-b/family-1/anthropic/v1/messages", {
      token: h.otherToken,
      body: message,
    });
    expect(refused.status).toBe(403);
    expect(up.seen[before]?.headers["x-api-key"]).toBe("installation-key-the-provider-refuses");
    // And it has no cloud-a credential at all: 503 naming the provider, never forwarded.
    const none = await h.call("POST", "/v1/llm/cloud-a/us-east-1/model/anthropic.claude-haiku-4-5/invoke", {
      token: h.otherToken,
      body: invokeBody,
    });
    expect(none.status).toBe(503);
    expect(String(none.body.detail)).toContain("cloud-a");
    expect(up.seen.length).toBe(before + 1);
  });

  it("refuses the lookup to anything but a service identity", async () => {
    const r = await h.call("POST", "/internal/governance/credentials/find", {
      token: h.adminToken,
      body: { projectId: h.projectId, kinds: ["cloud-b-key"] },
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(JSON.stringify(r.body)).not.toContain(ids.cloudB);
  });
});
