import {
  type ContractRoute,
  type DecisionRequest,
  getSandboxEffectivePolicyRoute,
  governanceInternalRoutes,
  governanceRoutes,
  INTERNAL_IDENTITY_HEADER,
  type InternalRoute,
  internalDecideRoute,
  type Principal,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import {
  generateInternalKeys,
  type InternalKeys,
  importOwnKeys,
  importScopedPublicKey,
  servicePrincipal,
  signIdentity,
} from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, startHarness } from "./fixtures/harness.ts";

const pglite = (await databaseTargets()).find((t) => t.name === "pglite")!;

/** The egress proxy's two calls are the only ones its own key may make (decision 0062). */
const EGRESS_ROUTES = new Set<ContractRoute | InternalRoute>([getSandboxEffectivePolicyRoute, internalDecideRoute]);

describe("identities signed with the egress proxy's own key", () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let egress: InternalKeys;
  let projectId: string;
  let sandbox: Principal;

  beforeAll(async () => {
    const opened = await pglite.open();
    cleanup = opened.cleanup;
    const pair = await generateInternalKeys();
    egress = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", JSON.stringify(pair.privateJwk));
    const egressPublicKey = await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", JSON.stringify(pair.publicJwk));
    h = await startHarness(opened.database, { egressPublicKey });
    projectId = await h.project("egress", h.orgId, h.owner);
    sandbox = { type: "sandbox", id: "sbx_e", sandboxId: "sbx_e", projectId, orgId: h.orgId };
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const send = async (
    service: "governance" | "tenancy",
    method: string,
    path: string,
    as: Principal,
    body?: unknown,
  ): Promise<Response> => {
    const headers = new Headers({ [INTERNAL_IDENTITY_HEADER]: await signIdentity(egress, as, { audience: service }) });
    if (body !== undefined) headers.set("content-type", "application/json");
    const target = service === "governance" ? h.governance : h.tenancy;
    return target.fetch(
      new Request(`http://${service}.test${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
  };
  const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => (name === "orgId" ? h.orgId : "x_1"));
  const egressDecision = (action: DecisionRequest["action"]): DecisionRequest => ({
    principal: sandbox,
    action,
    resource: { type: "Host", id: "registry.test", orgId: h.orgId, projectId, labels: {}, kind: "sandbox" },
    context: { host: "registry.test", port: 443, platform: false },
  });

  it("are accepted for the egress decision", async () => {
    const res = await send("governance", "POST", internalDecideRoute.path, servicePrincipal("sandbox"), {
      ...egressDecision("sandbox:egress"),
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ decision: "allow" });
  });

  it("read a sandbox's effective policy as the sandbox itself, past authentication and authorization", async () => {
    const path = getSandboxEffectivePolicyRoute.path.replace("{projectId}", projectId).replace("{sandboxId}", "sbx_e");
    const res = await send("governance", "GET", path, sandbox);
    // This harness has no sandbox-svc: the answer stops at reading the sandbox, after the identity passed.
    expect(res.status).toBe(503);
    expect((await json<{ detail: string }>(res)).detail).toMatch(/sandbox service is not configured/);
    expect((await send("governance", "GET", path, h.owner)).status).toBe(401);
  });

  it("decide nothing but sandbox:egress for a sandbox", async () => {
    const exec = await send("governance", "POST", internalDecideRoute.path, servicePrincipal("sandbox"), {
      ...egressDecision("sandbox:exec"),
      resource: { type: "Sandbox", id: "sbx_e", orgId: h.orgId, projectId },
    });
    expect(exec.status).toBe(403);
    const asUser = await send("governance", "POST", internalDecideRoute.path, servicePrincipal("sandbox"), {
      ...egressDecision("sandbox:egress"),
      principal: h.owner,
    });
    expect(asUser.status).toBe(403);
  });

  it("are refused (401) on every other governance route, public or internal", async () => {
    const others = [...governanceRoutes, ...governanceInternalRoutes].filter((route) => !EGRESS_ROUTES.has(route));
    expect(others.length).toBeGreaterThan(20);
    for (const route of others) {
      const as = route.path.startsWith("/internal/") ? servicePrincipal("sandbox") : h.owner;
      const method = route.method.toUpperCase();
      const res = await send("governance", method, fill(route.path), as, method === "GET" ? undefined : {});
      expect(res.status, `${route.method} ${route.path}`).toBe(401);
      expect((await json<{ detail: string }>(res)).detail).toBe("Invalid internal identity");
    }
  });

  it("are refused (401) by tenancy, whatever principal they name", async () => {
    for (const as of [h.owner, servicePrincipal("governance"), servicePrincipal("sandbox")]) {
      const me = await send("tenancy", "GET", "/v1/auth/me", as);
      expect(me.status).toBe(401);
      expect(me.headers.get("content-type")).toBe("application/problem+json");
      const orgs = await send("tenancy", "POST", "/v1/orgs", as, { name: "taken over" });
      expect(orgs.status).toBe(401);
    }
    // The shared key still opens tenancy: the refusal is the egress key's, not the harness's.
    const shared = await signIdentity(h.keys, h.owner, { audience: "tenancy" });
    const res = await h.tenancy.fetch(
      new Request("http://tenancy.test/v1/auth/me", { headers: { [INTERNAL_IDENTITY_HEADER]: shared } }),
    );
    expect(res.status).toBe(200);
  });

  it("are refused everywhere by a governance that was not given the egress public key", async () => {
    const token = await signIdentity(egress, servicePrincipal("sandbox"), { audience: "governance" });
    const opened = await pglite.open();
    const plain = await startHarness(opened.database);
    try {
      const res = await plain.governance.fetch(
        new Request(`http://governance.test${internalDecideRoute.path}`, {
          method: "POST",
          headers: { [INTERNAL_IDENTITY_HEADER]: token, "content-type": "application/json" },
          body: JSON.stringify(egressDecision("sandbox:egress")),
        }),
      );
      expect(res.status).toBe(401);
    } finally {
      await plain.close();
      await opened.cleanup();
    }
  });
});
