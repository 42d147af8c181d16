import { requirePostgres } from "@agentplane/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InferencePlatform, startInferencePlatform } from "./harness.ts";
import { CREDS, type FakeUpstream, startFakeUpstream } from "./upstream.ts";

const pg = await requirePostgres();

const NO_OPUS = `permit(principal, action == Action::"llm:invoke", resource);
@id("no-opus")
forbid(principal, action == Action::"llm:invoke", resource) when { context.modelId like "*opus*" };`;

describe.skipIf(!pg.available)(`the llm:invoke decision${pg.reason}`, () => {
  let up: FakeUpstream;
  let h: InferencePlatform;

  beforeAll(async () => {
    up = await startFakeUpstream();
    h = await startInferencePlatform({ cloudA: { kind: "bearer", token: CREDS.bearer }, cloudAEndpointUrl: up.url });
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  const invoke = (model: string) =>
    h.call("POST", `/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(model)}/invoke`, {
      token: h.projectToken,
      body: { anthropic_version: "bedrock-2023-05-31", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
    });

  it("runs before the reservation: a denied model is 403 policy-denied and never reaches the provider", async () => {
    const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, {
      token: h.adminToken,
      body: { name: "no-opus", cedar: NO_OPUS },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    const binding = await h.call("POST", `/v1/projects/${h.projectId}/policy-bindings`, {
      token: h.adminToken,
      body: { policyId: policy.body.id, mode: "enforce" },
    });
    expect(binding.status, JSON.stringify(binding.body)).toBe(201);
    const seen = up.seen.length;
    const denied = await invoke("us.anthropic.claude-opus-4-1-20250805-v1:0");
    expect(denied.status).toBe(403);
    expect(String(denied.body.type)).toMatch(/policy-denied$/);
    expect(String(denied.body.detail)).toContain("no-opus");
    expect(up.seen.length).toBe(seen);
    expect((await invoke("us.anthropic.claude-haiku-4-5-20251001-v1:0")).status).toBe(200);
  });
});
