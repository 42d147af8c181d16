import { sandboxRoutes } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bearerProtocol,
  createSandbox,
  openExec,
  requireBwrap,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const bwrap = requireBwrap();

/** The resources of one organization that the routes' parameters point at. */
interface Ids {
  projectId: string;
  sandboxId: string;
  sessionId: string;
  tokenId: string;
}

/** A valid request for each operation, so that only identity and access decide the answer. */
const REQUESTS: Record<string, (ids: Ids) => { body?: unknown }> = {
  listSandboxes: () => ({}),
  createSandbox: () => ({ body: { name: "intruder", start: false } }),
  getSandbox: () => ({}),
  updateSandbox: () => ({ body: { name: "renamed" } }),
  deleteSandbox: () => ({}),
  startSandbox: () => ({}),
  stopSandbox: () => ({}),
  listSandboxRevisions: () => ({}),
  rollbackSandbox: () => ({ body: { revision: 1 } }),
  execShell: (ids) => ({ body: { projectId: ids.projectId, sandboxId: ids.sandboxId, command: "true" } }),
  createShellSession: (ids) => ({ body: { sandboxId: ids.sandboxId } }),
  listShellSessions: () => ({}),
  getShellSession: () => ({}),
  deleteShellSession: () => ({}),
  runShellSessionCommand: () => ({ body: { command: "true" } }),
  createSandboxToken: (ids) => ({ body: { sandboxId: ids.sandboxId, name: "intruder" } }),
  listSandboxTokens: () => ({}),
  getSandboxToken: () => ({}),
  deleteSandboxToken: () => ({}),
  k8sGetApiVersions: () => ({}),
  k8sGetApiGroups: () => ({}),
  k8sGetApiResources: () => ({}),
  k8sListPods: () => ({}),
  k8sGetPod: () => ({}),
};

function fillPath(template: string, ids: Ids): string {
  return template
    .replace("{projectId}", ids.projectId)
    .replace("{sandboxId}", ids.sandboxId)
    .replace("{sessionId}", ids.sessionId)
    .replace("{id}", ids.tokenId);
}

const httpRoutes = sandboxRoutes.filter((r) => !r["x-websocket"]);
const wsRoutes = sandboxRoutes.filter((r) => r["x-websocket"]);

describe.skipIf(!bwrap.available)(`security checks for every sandbox route${bwrap.reason}`, () => {
  let h: SandboxPlatform;
  let mine: Ids;
  let theirs: Ids;

  /** A running sandbox with a shell session and a sandbox token, created with `token`. */
  async function resources(projectId: string, token: string): Promise<Ids> {
    const sandbox = await h.call<{ id: string }>("POST", `/v1/projects/${projectId}/sandboxes`, {
      token,
      body: { name: "sec", start: true },
    });
    expect(sandbox.status).toBe(201);
    const session = await h.call<{ id: string }>("POST", `/v1/projects/${projectId}/shell-sessions`, {
      token,
      body: { sandboxId: sandbox.body.id },
    });
    expect(session.status).toBe(201);
    const sbt = await h.call<{ id: string }>("POST", `/v1/projects/${projectId}/sandbox-tokens`, {
      token,
      body: { sandboxId: sandbox.body.id, name: "sec" },
    });
    expect(sbt.status).toBe(201);
    return { projectId, sandboxId: sandbox.body.id, sessionId: session.body.id, tokenId: sbt.body.id };
  }

  beforeAll(async () => {
    h = await startSandboxPlatform();
    mine = await resources(h.projectId, h.adminToken);
    theirs = await resources(h.otherProjectId, h.ownerToken);
  });
  afterAll(async () => {
    await h?.close();
  });

  it("has a request for every sandbox route of the contract", () => {
    expect(Object.keys(REQUESTS).sort()).toEqual(httpRoutes.map((r) => r.operationId).sort());
    expect(wsRoutes.map((r) => r.operationId)).toEqual(["execSandboxStream", "k8sExecPod", "k8sAttachPod"]);
  });

  describe.each(httpRoutes.map((r) => [r.operationId, r] as const))("%s", (operationId, route) => {
    const method = route.method.toUpperCase();
    const request = (ids: Ids, token: string | null) =>
      h.call(method, fillPath(route.path, ids), { token, ...REQUESTS[operationId]?.(ids) });

    it("answers 401 without a token and with a bad token", async () => {
      const none = await request(mine, null);
      expect(none.status).toBe(401);
      expect(none.headers.get("content-type")).toBe("application/problem+json");
      expect((await request(mine, "apl_00000000000000000000000000_nope")).status).toBe(401);
    });

    // Discovery documents (`/k8s/api`, `/k8s/api/v1`) name no resource: any valid token reads them.
    if (route["x-permission"] === "authenticated") {
      it("lets any valid token read it", async () => {
        expect((await request(mine, h.viewerToken)).status).toBe(200);
      });
      return;
    }

    it("answers 404 for another organization's ids", async () => {
      const res = await request(theirs, h.adminToken);
      expect(res.status, JSON.stringify(res.body)).toBe(404);
    });

    const reads = route["x-permission"] === "sandboxes:read";
    it(reads ? "lets a viewer read" : "refuses a viewer with 403", async () => {
      const res = await request(mine, h.viewerToken);
      expect(res.status, JSON.stringify(res.body)).toBe(reads ? 200 : 403);
    });
  });

  it("does not reach another organization's sandbox through one's own project", async () => {
    const mixed = { ...theirs, projectId: h.projectId };
    expect((await h.call("GET", fillPath("/v1/projects/{projectId}/sandboxes/{sandboxId}", mixed))).status).toBe(404);
    const execMixed = await h.call("POST", "/v1/shell/exec", {
      body: { projectId: h.projectId, sandboxId: theirs.sandboxId, command: "true" },
    });
    expect(execMixed.status).toBe(404);
    const sessionMixed = await h.call("POST", `/v1/projects/${h.projectId}/shell-sessions`, {
      body: { sandboxId: theirs.sandboxId },
    });
    expect(sessionMixed.status).toBe(404);
    const tokenMixed = await h.call("POST", `/v1/projects/${h.projectId}/sandbox-tokens`, {
      body: { sandboxId: theirs.sandboxId, name: "mixed" },
    });
    expect(tokenMixed.status).toBe(404);
    const otherSession = await h.call("GET", `/v1/projects/${h.projectId}/shell-sessions/${theirs.sessionId}`);
    expect(otherSession.status).toBe(404);
  });

  describe.each(wsRoutes.map((r) => [r.operationId, r.path] as const))("%s (WebSocket)", (_operationId, path) => {
    const url = (ids: Ids) => `${h.url.replace(/^http/, "ws")}${fillPath(path, ids)}?command=true`;
    it("answers 401 without a token and with a bad token", async () => {
      expect(await openExec(url(mine), ["v5.channel.k8s.io"])).toEqual({ refused: 401 });
      expect(await openExec(url(mine), ["v5.channel.k8s.io", bearerProtocol("apl_x_y")])).toEqual({ refused: 401 });
    });
    it("answers 404 for another organization's ids", async () => {
      expect(await openExec(url(theirs), ["v5.channel.k8s.io", bearerProtocol(h.adminToken)])).toEqual({
        refused: 404,
      });
    });
    it("refuses a viewer with 403", async () => {
      expect(await openExec(url(mine), ["v5.channel.k8s.io", bearerProtocol(h.viewerToken)])).toEqual({
        refused: 403,
      });
    });
  });

  it("left the other organization's resources untouched", async () => {
    const sandbox = await h.call<{ name: string; state: string }>(
      "GET",
      fillPath("/v1/projects/{projectId}/sandboxes/{sandboxId}", theirs),
      { token: h.ownerToken },
    );
    expect(sandbox.body).toMatchObject({ name: "sec", state: "running" });
    const mineNow = await createSandbox(h, { name: "still-works", start: false });
    expect(mineNow.id).toMatch(/^sbx_/);
  });
});
