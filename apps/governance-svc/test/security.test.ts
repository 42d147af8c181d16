import {
  type ContractRoute,
  governanceRoutes,
  PERMISSIONS,
  type Permission,
  type Principal,
} from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, json, secondOrg, startHarness } from "./fixtures/harness.ts";

const [postgres] = await databaseTargets();
const target = postgres!;
const CEDAR = `@id("r") permit(principal, action == Action::"sandbox:exec", resource);`;

/** A valid body per operation, so validation passes and the authorization answer shows. */
const BODIES: Record<string, unknown> = {
  createOrgPolicy: { name: "sec", cedar: CEDAR },
  createProjectPolicy: { name: "sec", cedar: CEDAR },
  updateOrgPolicy: { name: "sec2" },
  updateProjectPolicy: { name: "sec2" },
  createOrgPolicyBinding: { policyId: "pol_x" },
  createProjectPolicyBinding: { policyId: "pol_x" },
  createCredential: { name: "sec", kind: "http-bearer", token: "t" },
  updateCredential: { name: "sec2" },
  evaluatePolicyDecision: { action: "sandbox:exec", resource: { type: "Sandbox", id: "sbx_x" } },
};

type Ids = Record<string, string>;

async function seed(h: Harness, owner: Principal, orgId: string): Promise<{ org: Ids; project: Ids }> {
  const projectId = await h.project(`p-${orgId}`, orgId, owner);
  const post = async (path: string, body: unknown) =>
    json<{ id: string }>(await h.call("POST", path, { as: owner, body }));
  const orgPolicy = await post(`/v1/orgs/${orgId}/policies`, { name: "o", cedar: CEDAR });
  const projectPolicy = await post(`/v1/projects/${projectId}/policies`, { name: "p", cedar: CEDAR });
  const orgBinding = await post(`/v1/orgs/${orgId}/policy-bindings`, { policyId: orgPolicy.id });
  const projectBinding = await post(`/v1/projects/${projectId}/policy-bindings`, { policyId: projectPolicy.id });
  const credential = await post(`/v1/projects/${projectId}/credentials`, {
    name: "c",
    kind: "http-bearer",
    token: "t",
  });
  const common = { orgId, projectId, credentialId: credential.id, sandboxId: "sbx_none", version: "1" };
  return {
    org: { ...common, policyId: orgPolicy.id, bindingId: orgBinding.id },
    project: { ...common, policyId: projectPolicy.id, bindingId: projectBinding.id },
  };
}

function fill(route: ContractRoute, ids: { org: Ids; project: Ids }): string {
  const set = route.path.startsWith("/v1/projects/") ? ids.project : ids.org;
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = set[name];
    if (!id) throw new Error(`no id for ${name}`);
    return id;
  });
}

describe.skipIf(!target.available)(`governance route security on postgres${target.reason}`, () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  let viewer: Principal;
  let a: { org: Ids; project: Ids };
  let b: { org: Ids; project: Ids };

  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h = await startHarness(opened.database);
    viewer = await h.member("viewer@a.test", "viewer");
    a = await seed(h, h.owner, h.orgId);
    const other = await secondOrg(h);
    b = await seed(h, other.owner, other.orgId);
  });
  afterAll(async () => {
    await h?.close();
    await cleanup?.();
  });

  const request = (route: ContractRoute, ids: { org: Ids; project: Ids }, as?: Principal) => {
    const body = BODIES[route.operationId];
    return h.call(route.method.toUpperCase(), fill(route, ids), {
      ...(as ? { as } : {}),
      ...(body !== undefined ? { body } : {}),
    });
  };

  for (const route of governanceRoutes) {
    const access = route["x-permission"];
    const name = `${route.method.toUpperCase()} ${route.path}`;

    it(`${name}: 401 without an identity`, async () => {
      const res = await request(route, a);
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
    });

    if (/\{(orgId|projectId)\}/.test(route.path)) {
      it(`${name}: 404 for another organization's ids`, async () => {
        expect((await request(route, b, h.owner)).status).toBe(404);
      });
    }

    if (access !== "authenticated" && access !== "public" && PERMISSIONS[access as Permission].minRole !== "viewer") {
      it(`${name}: 403 for a viewer`, async () => {
        expect((await request(route, a, viewer)).status).toBe(403);
      });
    }
  }
});
