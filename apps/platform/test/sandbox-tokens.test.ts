import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  exec,
  requireBwrap,
  type SandboxBody,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const bwrap = requireBwrap();

interface SandboxToken {
  id: string;
  sandboxId: string;
  name: string;
  token?: string;
  expiresAt: string | null;
}

describe.skipIf(!bwrap.available)(`sandbox tokens through the gateway${bwrap.reason}`, () => {
  let h: SandboxPlatform;
  let own: SandboxBody;
  let other: SandboxBody;
  beforeAll(async () => {
    h = await startSandboxPlatform();
    [own, other] = await Promise.all([
      createSandbox(h, { name: "own" }),
      createSandbox(h, { name: "other", start: false }),
    ]);
  });
  afterAll(async () => {
    await h?.close();
  });
  const tokens = () => `/v1/projects/${h.projectId}/sandbox-tokens`;
  const sandboxPath = (id: string) => `/v1/projects/${h.projectId}/sandboxes/${id}`;

  /** Waits out the gateway's short cache of resolved tokens. */
  const eventuallyUnauthenticated = (token: string) =>
    expect
      .poll(async () => (await h.call("GET", "/v1/auth/me", { token })).status, { timeout: 6000, interval: 250 })
      .toBe(401);

  it("creates a token (secret shown once), lists and gets it without the secret", async () => {
    const created = await h.call<SandboxToken>("POST", tokens(), {
      body: { sandboxId: own.id, name: "ci", expiresIn: 3600 },
    });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(/^apsb_[0-9a-z]{26}_[0-9a-f]{64}$/);
    expect(Date.parse(created.body.expiresAt ?? "")).toBeGreaterThan(Date.now() + 3500_000);
    const listed = await h.call<{ items: SandboxToken[] }>("GET", tokens());
    expect(listed.body.items.map((t) => t.id)).toContain(created.body.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    const got = await h.call<SandboxToken>("GET", `/v1/sandbox-tokens/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.token).toBeUndefined();

    const tooShort = await h.call("POST", tokens(), { body: { sandboxId: own.id, name: "x", expiresIn: 5 } });
    expect(tooShort.status).toBe(400);
    const unknown = await h.call("POST", tokens(), {
      body: { sandboxId: "sbx_01j0000000000000000000000", name: "x" },
    });
    expect(unknown.status).toBe(404);
  });

  it("acts as identity type sandbox: reads its own sandbox and nothing else", async () => {
    const created = await h.call<SandboxToken>("POST", tokens(), { body: { sandboxId: own.id, name: "reader" } });
    const token = created.body.token as string;

    const me = await h.call<{ type: string; sandboxId?: string; projectId?: string }>("GET", "/v1/auth/me", {
      token,
    });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ type: "sandbox", sandboxId: own.id, projectId: h.projectId });

    const mine = await h.call<SandboxBody>("GET", sandboxPath(own.id), { token });
    expect(mine.status).toBe(200);
    expect(mine.body.id).toBe(own.id);

    expect((await h.call("GET", sandboxPath(other.id), { token })).status).toBe(404);
    expect((await h.call("GET", `/v1/projects/${h.projectId}/sandboxes`, { token })).status).toBe(403);
    expect((await h.call("GET", `/v1/projects/${h.otherProjectId}/sandboxes`, { token })).status).toBe(404);
    expect((await h.call("GET", `${sandboxPath(own.id)}/revisions`, { token })).status).toBe(200);
    for (const [method, path] of [
      ["POST", `${sandboxPath(own.id)}/stop`],
      ["PATCH", sandboxPath(own.id)],
      ["GET", tokens()],
    ] as const) {
      const res = await h.call(method, path, { token, ...(method === "PATCH" ? { body: { name: "mine" } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    // It runs commands in itself (the agent runtime's sandbox switch), never in another sandbox.
    const execAsSandbox = await h.call<{ exitCode: number; stdout: string }>("POST", "/v1/shell/exec", {
      token,
      body: { projectId: h.projectId, sandboxId: own.id, command: ["echo", "self"] },
    });
    expect(execAsSandbox.status).toBe(200);
    expect(execAsSandbox.body).toMatchObject({ exitCode: 0, stdout: "self\n" });
    const execElsewhere = await h.call("POST", "/v1/shell/exec", {
      token,
      body: { projectId: h.projectId, sandboxId: other.id, command: "true" },
    });
    expect(execElsewhere.status).toBe(404);

    // Tenancy: nothing but /v1/auth/me.
    for (const path of [`/v1/orgs/${h.orgId}`, `/v1/orgs/${h.orgId}/projects`, `/v1/projects/${h.projectId}`]) {
      const res = await h.call("GET", path, { token });
      expect([403, 404], `${path} → ${res.status}`).toContain(res.status);
    }
    const list = await h.call<{ items?: unknown[] }>("GET", "/v1/orgs", { token });
    expect(list.body.items ?? []).toEqual([]);
    const newOrg = await h.call("POST", "/v1/orgs", { token, body: { name: "escape" } });
    expect([403, 404]).toContain(newOrg.status);
    const apiToken = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { token, body: { name: "escape" } });
    expect([403, 404]).toContain(apiToken.status);
  });

  it("puts a platform token, the API URL and its own ids into the sandbox's environment", async () => {
    const env = await exec(
      h,
      own.id,
      'printf "%s\\n%s\\n%s\\n%s" "$AGENTPLANE_TOKEN" "$AGENTPLANE_API_URL" "$AGENTPLANE_PROJECT_ID" "$AGENTPLANE_SANDBOX_ID"',
    );
    const [token, apiUrl, projectId, sandboxId] = env.body.stdout.split("\n") as [string, string, string, string];
    expect(token).toMatch(/^apsb_/);
    // The platform listens on the host's loopback, which the sandbox's network cannot see: it
    // reaches it by name through the egress proxy.
    expect(apiUrl).toBe(`http://agentplane.internal:${new URL(h.platform.publicUrl).port}`);
    expect([projectId, sandboxId]).toEqual([h.projectId, own.id]);
    const me = await h.call<{ type: string; sandboxId: string }>("GET", "/v1/auth/me", { token });
    expect(me.body).toMatchObject({ type: "sandbox", sandboxId: own.id });
  });

  it("is not found from another organization, in the words of a token that does not exist", async () => {
    const created = await h.call<SandboxToken>("POST", tokens(), { body: { sandboxId: own.id, name: "hidden" } });
    const rival = await h.call<{ token: string }>("POST", `/v1/orgs/${h.otherOrgId}/api-tokens`, {
      token: h.ownerToken,
      body: { name: "rival", role: "admin" },
    });
    const missing = "sbt_01j0000000000000000000000";
    for (const method of ["GET", "DELETE"] as const) {
      const foreign = await h.call<{ detail: string }>(method, `/v1/sandbox-tokens/${created.body.id}`, {
        token: rival.body.token,
      });
      const absent = await h.call<{ detail: string }>(method, `/v1/sandbox-tokens/${missing}`, {
        token: rival.body.token,
      });
      expect([foreign.status, absent.status], method).toEqual([404, 404]);
      expect(foreign.body.detail, method).toBe(absent.body.detail.replace(missing, created.body.id));
      expect(foreign.body.detail).not.toContain(h.projectId);
    }
    expect((await h.call("GET", `/v1/sandbox-tokens/${created.body.id}`)).status).toBe(200);
  });

  it("revokes a token on DELETE", async () => {
    const created = await h.call<SandboxToken>("POST", tokens(), { body: { sandboxId: own.id, name: "short" } });
    const token = created.body.token as string;
    expect((await h.call("GET", "/v1/auth/me", { token })).status).toBe(200);
    expect((await h.call("DELETE", `/v1/sandbox-tokens/${created.body.id}`)).status).toBe(204);
    expect((await h.call("GET", `/v1/sandbox-tokens/${created.body.id}`)).status).toBe(404);
    await eventuallyUnauthenticated(token);
    const listed = await h.call<{ items: SandboxToken[] }>("GET", tokens());
    expect(listed.body.items.map((t) => t.id)).not.toContain(created.body.id);
  });

  it("revokes every token of a sandbox, its platform token too, when the sandbox is deleted", async () => {
    const doomed = await createSandbox(h, { name: "doomed" });
    const created = await h.call<SandboxToken>("POST", tokens(), { body: { sandboxId: doomed.id, name: "t" } });
    const platformToken = (await exec(h, doomed.id, 'printf %s "$AGENTPLANE_TOKEN"')).body.stdout;
    const token = created.body.token as string;
    expect((await h.call("GET", "/v1/auth/me", { token: platformToken })).status).toBe(200);
    expect((await h.call("DELETE", sandboxPath(doomed.id))).status).toBe(204);
    await eventuallyUnauthenticated(token);
    await eventuallyUnauthenticated(platformToken);
    expect((await h.call("GET", `/v1/sandbox-tokens/${created.body.id}`)).status).toBe(404);
  });
});
