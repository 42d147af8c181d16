import {
  type AuthorizeResponse,
  internalAuthorizeRoute,
  internalProjectVerificationKeysRoute,
  internalResolveApiTokenRoute,
  internalResolveOidcUserRoute,
} from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import type { MemoryBus } from "@agentplane/events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

describe("internal endpoints (PGlite)", () => {
  let database: Database;
  let h: Awaited<ReturnType<typeof startActivated>>;
  let projectId: string;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    h = await startActivated(database);
    projectId = (
      await json<{ id: string }>(
        await h.call("POST", `/v1/orgs/${h.orgId}/projects`, { as: h.owner, body: { name: "p" } }),
      )
    ).id;
  });
  afterAll(async () => {
    await stopTenancies();
    await database.close();
  });

  const decide = async (principal: object, permission: string, scope: object) =>
    json<AuthorizeResponse>(await h.internal("POST", internalAuthorizeRoute.path, { principal, permission, ...scope }));

  it("answers service identities only", async () => {
    const user = await h.oidcUser("jo@x.test");
    const body = { token: "apl_x" };
    expect((await h.call("POST", internalResolveApiTokenRoute.path, { body })).status).toBe(401);
    expect((await h.call("POST", internalResolveApiTokenRoute.path, { as: user, body })).status).toBe(403);
    expect((await h.call("POST", internalAuthorizeRoute.path, { as: h.owner, body: {} })).status).toBe(403);
    const path = internalProjectVerificationKeysRoute.path.replace("{projectId}", projectId);
    expect((await h.call("GET", path, { as: user })).status).toBe(403);
    expect((await h.internal("GET", path.replace(projectId, "prj_missing"))).status).toBe(404);
    expect((await h.internal("POST", internalResolveApiTokenRoute.path, { tok: 1 })).status).toBe(400);
  });

  it("provisions an OIDC user once per (issuer, subject) and keeps the profile current", async () => {
    const first = await h.internal("POST", internalResolveOidcUserRoute.path, {
      issuer: "https://a",
      subject: "42",
      email: "a@x.test",
    });
    const again = await h.internal("POST", internalResolveOidcUserRoute.path, {
      issuer: "https://a",
      subject: "42",
      email: "a@x.test",
      name: "Ann",
    });
    const other = await h.internal("POST", internalResolveOidcUserRoute.path, { issuer: "https://b", subject: "42" });
    const a = (await json<{ principal: { id: string } }>(first)).principal;
    const b = (await json<{ principal: { id: string; displayName: string } }>(again)).principal;
    expect(b.id).toBe(a.id);
    expect(b.displayName).toBe("Ann");
    expect((await json<{ principal: { id: string } }>(other)).principal.id).not.toBe(a.id);
  });

  it("decides for every principal type", async () => {
    const viewer = await addMember(h, h.owner, h.orgId, "viewer@x.test", "viewer");
    expect(await decide(viewer, "org:read", { orgId: h.orgId })).toMatchObject({
      decision: "allowed",
      orgRole: "viewer",
    });
    expect(await decide(viewer, "org:update", { orgId: h.orgId })).toMatchObject({ decision: "forbidden" });
    expect(await decide(viewer, "org:read", { orgId: "org_other" })).toEqual({ decision: "not_found" });
    expect(await decide(viewer, "project:read", { projectId })).toMatchObject({
      decision: "allowed",
      projectRole: "viewer",
    });
    expect(await decide(h.owner, "sandboxes:exec", { projectId })).toMatchObject({
      decision: "allowed",
      projectRole: "admin",
    });
    expect(await decide(h.owner, "no:such-permission", { projectId })).toEqual({ decision: "forbidden" });

    const cluster = { type: "cluster", id: "cl_1", projectId, orgId: h.orgId };
    expect(await decide(cluster, "connections:read", { projectId })).toMatchObject({ decision: "allowed" });
    expect(await decide(cluster, "sandboxes:write", { projectId })).toMatchObject({ decision: "forbidden" });
    expect(await decide(cluster, "org:read", { orgId: h.orgId })).toEqual({ decision: "not_found" });
    const sandbox = { type: "sandbox", id: "sbt_1", projectId, sandboxId: "sbx_1" };
    expect(await decide(sandbox, "project:read", { projectId })).toEqual({ decision: "not_found" });
    const service = { type: "service", id: "svc_x" };
    expect(await decide(service, "project:read", { projectId })).toEqual({ decision: "not_found" });

    // A member-capped token of the owner keeps developer rights on projects but not admin ones.
    const token = await json<{ token: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "m", role: "member" } }),
    );
    const capped = await h.principalOf(token.token);
    expect(await decide(capped, "sandboxes:write", { projectId })).toMatchObject({
      decision: "allowed",
      projectRole: "developer",
    });
    expect(await decide(capped, "project:update", { projectId })).toMatchObject({ decision: "forbidden" });
  });

  it("does not fail a request when the bus is down", async () => {
    const bus = h.bus as MemoryBus;
    await bus.close();
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "no bus" } });
    expect(res.status).toBe(201);
  });
});
