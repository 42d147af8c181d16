import type { OrgRole, Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TENANCY_SCHEMA, type TenancyDatabase } from "../src/db/schema.ts";
import { insertApiToken } from "../src/services/api-tokens.ts";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

// Postgres only: the listing is authorization, which does not differ between the engines.
const [postgres] = await databaseTargets();

interface Listed {
  items: Record<string, unknown>[];
  nextCursor?: string;
}

describe.skipIf(!postgres!.available)(`personal API tokens of the caller${postgres!.reason}`, () => {
  let cleanup: () => Promise<void>;
  let h: Awaited<ReturnType<typeof startActivated>>;
  let db: Kysely<TenancyDatabase>;
  beforeAll(async () => {
    const opened = await postgres!.open();
    cleanup = opened.cleanup;
    h = await startActivated(opened.database);
    db = opened.database.kysely.withSchema(TENANCY_SCHEMA) as unknown as Kysely<TenancyDatabase>;
  });
  afterAll(async () => {
    await stopTenancies();
    await cleanup?.();
  });

  /** A token bound to no organization, as a device sign-in mints one. */
  async function personal(
    userId: string,
    role: OrgRole,
    scopes?: string[],
  ): Promise<{ id: string; token: string; principal: Principal }> {
    const { row, token } = await insertApiToken(db, { orgId: null, userId, name: `cli ${role}`, role, scopes });
    return { id: row.id, token, principal: await h.principalOf(token) };
  }

  async function mine(as: Principal, query = ""): Promise<Listed> {
    const res = await h.call("GET", `/v1/auth/api-tokens${query}`, { as });
    expect(res.status).toBe(200);
    return json<Listed>(res);
  }

  it("lists the caller's tokens bound to no organization, never secrets nor other users' tokens", async () => {
    const ownerId = h.owner.userId!;
    const cli = await personal(ownerId, "owner");
    const orgToken = await json<{ id: string }>(
      await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "org" } }),
    );
    const other = await addMember(h, h.owner, h.orgId, "other@a.test", "admin");
    const othersToken = await personal(other.id, "admin");

    const listed = await mine(h.owner);
    const ids = listed.items.map((t) => t.id);
    // The bootstrap token the owner acts with, and the sign-in token.
    expect(ids).toEqual(expect.arrayContaining([h.owner.id, cli.id]));
    expect(ids).not.toContain(orgToken.id);
    expect(ids).not.toContain(othersToken.id);
    expect(listed.items.every((t) => t.userId === ownerId && t.orgId === undefined && t.token === undefined)).toBe(
      true,
    );
    expect(JSON.stringify(listed)).not.toContain(cli.token.slice(31));

    // The other user (as a person and through their token) sees only theirs.
    for (const as of [other, othersToken.principal]) {
      expect((await mine(as)).items.map((t) => t.id)).toEqual([othersToken.id]);
    }
    // Another user's token by id stays hidden too.
    expect((await h.call("GET", `/v1/api-tokens/${cli.id}`, { as: other })).status).toBe(404);
    expect((await h.call("DELETE", `/v1/api-tokens/${cli.id}`, { as: othersToken.principal })).status).toBe(404);
  });

  it("pages by id like the other lists", async () => {
    const ownerId = h.owner.userId!;
    for (let i = 0; i < 3; i++) await personal(ownerId, "owner");
    const all = (await mine(h.owner, "?limit=200")).items.map((t) => t.id as string);
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect(all).toEqual([...all].sort());
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await mine(h.owner, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.items.length).toBeLessThanOrEqual(2);
      paged.push(...res.items.map((t) => t.id as string));
      cursor = res.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all);
    expect((await h.call("GET", "/v1/auth/api-tokens?limit=0", { as: h.owner })).status).toBe(400);
  });

  it("a lower-role token sees only tokens ranked at most its own; an organization's token sees none", async () => {
    const ownerId = h.owner.userId!;
    const member = await personal(ownerId, "member");
    const viewer = await personal(ownerId, "viewer");
    const listed = await mine(member.principal);
    expect(listed.items.map((t) => t.id)).toEqual(expect.arrayContaining([member.id, viewer.id]));
    expect(listed.items.every((t) => t.role === "member" || t.role === "viewer")).toBe(true);
    // Nor reaches the owner-role token by id: not to read, not to revoke.
    expect((await h.call("GET", `/v1/api-tokens/${h.owner.id}`, { as: member.principal })).status).toBe(404);
    expect((await h.call("DELETE", `/v1/api-tokens/${h.owner.id}`, { as: member.principal })).status).toBe(404);
    const still = await json<{ revokedAt?: string }>(
      await h.call("GET", `/v1/api-tokens/${h.owner.id}`, { as: h.owner }),
    );
    expect(still.revokedAt).toBeUndefined();
    // Its own rank and below stay in reach.
    expect((await h.call("DELETE", `/v1/api-tokens/${viewer.id}`, { as: member.principal })).status).toBe(204);
    const revoked = (await mine(h.owner)).items.find((t) => t.id === viewer.id);
    expect(revoked?.revokedAt).toBeDefined();

    const orgBound = await h.principalOf(
      (
        await json<{ token: string }>(
          await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body: { name: "bound" } }),
        )
      ).token,
    );
    expect((await h.call("GET", "/v1/auth/api-tokens", { as: orgBound })).status).toBe(403);
    expect((await h.call("GET", `/v1/api-tokens/${member.id}`, { as: orgBound })).status).toBe(404);
  });

  it("ranks a token by its user's highest role: a demoted user's owner-role token acts as admin", async () => {
    const user = await addMember(h, h.owner, h.orgId, "demoted@a.test", "admin");
    const ownerRole = await personal(user.id, "owner");
    const adminRole = await personal(user.id, "admin");
    const memberRole = await personal(user.id, "member");
    // Both rank as admin: each sees the other; the member-role one sees neither.
    for (const as of [ownerRole, adminRole]) {
      expect((await mine(as.principal)).items.map((t) => t.id)).toEqual(
        [ownerRole.id, adminRole.id, memberRole.id].sort(),
      );
    }
    expect((await mine(memberRole.principal)).items.map((t) => t.id)).toEqual([memberRole.id]);
    // A viewer of every organization still lists their own sign-in tokens.
    const viewer = await addMember(h, h.owner, h.orgId, "viewer@a.test", "viewer");
    const viewerToken = await personal(viewer.id, "viewer");
    expect((await mine(viewer)).items.map((t) => t.id)).toEqual([viewerToken.id]);
  });

  it("a scoped token lists when its scopes name api-tokens:manage, ranked by its role; else 403 naming it", async () => {
    const ownerId = h.owner.userId!;
    const manager = await personal(ownerId, "member", ["api-tokens:manage", "llm:invoke"]);
    const listed = await mine(manager.principal);
    expect(listed.items.map((t) => t.id)).toContain(manager.id);
    // The lower of its role and its user's: a member-role token of the owner sees no admin or owner token.
    expect(listed.items.every((t) => t.role === "member" || t.role === "viewer")).toBe(true);
    expect((await h.call("GET", `/v1/api-tokens/${manager.id}`, { as: manager.principal })).status).toBe(200);

    const modelsOnly = await personal(ownerId, "member", ["llm:invoke"]);
    for (const path of ["/v1/auth/api-tokens", `/v1/api-tokens/${modelsOnly.id}`]) {
      const res = await h.call("GET", path, { as: modelsOnly.principal });
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect((await json<{ detail: string }>(res)).detail).toContain("api-tokens:manage");
    }
    expect((await h.call("DELETE", `/v1/api-tokens/${modelsOnly.id}`, { as: modelsOnly.principal })).status).toBe(403);
  });

  it("answers 401 without an identity", async () => {
    const res = await h.call("GET", "/v1/auth/api-tokens");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });
});
