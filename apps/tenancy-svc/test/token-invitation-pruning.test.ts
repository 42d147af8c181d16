import { randomBytes } from "node:crypto";
import { newId } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKEN, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
type Status = "pending" | "accepted" | "declined" | "revoked";

describe.each(await databaseTargets())("pruning of ended API tokens and invitations ($name)", (target) => {
  let cleanup: () => Promise<void>;
  let h: Awaited<ReturnType<typeof startActivated>>;
  let userId: string;
  beforeAll(async () => {
    if (!target.available) return;
    const opened = await target.open();
    cleanup = opened.cleanup;
    // No timer: every run below is called with its own clock.
    h = await startActivated(opened.database, { signInPruneIntervalMs: 0 });
    userId = (await h.service.context.db.selectFrom("users").select("id").executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await stopTenancies();
    await cleanup?.();
  });
  const db = () => h.service.context.db;

  async function token(ended: { expiresAt?: Date; revokedAt?: Date }): Promise<string> {
    const id = newId("apiToken");
    await db()
      .insertInto("api_tokens")
      .values({
        id,
        org_id: h.orgId,
        user_id: userId,
        name: "old",
        role: "member",
        project_id: null,
        secret_hash: randomBytes(32).toString("hex"),
        kind: "apl",
        prefix: "apl_old",
        last_used_at: null,
        expires_at: ended.expiresAt ?? null,
        revoked_at: ended.revokedAt ?? null,
      })
      .execute();
    return id;
  }
  async function invitation(status: Status, expiresAt: Date, respondedAt: Date | null = null): Promise<string> {
    const id = newId("invitation");
    await db()
      .insertInto("invitations")
      .values({
        id,
        org_id: h.orgId,
        email: `${id}@x.test`,
        role: "member",
        status,
        invited_by: userId,
        expires_at: expiresAt,
        responded_at: respondedAt,
      })
      .execute();
    return id;
  }
  const ids = async (table: "api_tokens" | "invitations") =>
    (await db().selectFrom(table).select("id").orderBy("id").execute()).map((r) => r.id);
  const listed = async (what: "api-tokens" | "invitations") =>
    (
      await json<{ items: { id: string }[] }>(
        await h.call("GET", `/v1/orgs/${h.orgId}/${what}?limit=100`, { as: h.owner }),
      )
    ).items;

  it.skipIf(!target.available)(
    `deletes what ended a month ago, and keeps live and recently ended ones listed${target.reason}`,
    async () => {
      const now = Date.now();
      // Live, through the API: a token without expiry, one expiring in ten days, a pending invitation.
      const created = async (body: Record<string, unknown>) => {
        const res = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: h.owner, body });
        expect(res.status).toBe(201);
        return json<{ id: string; token: string }>(res);
      };
      const forever = await created({ name: "forever" });
      const expiring = await created({ name: "expiring", expiresAt: new Date(now + 10 * DAY).toISOString() });
      const revokedNow = await created({ name: "revoked now" });
      expect((await h.call("DELETE", `/v1/api-tokens/${revokedNow.id}`, { as: h.owner })).status).toBe(204);
      const invite = async (email: string) => {
        const res = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, { as: h.owner, body: { email } });
        expect(res.status).toBe(201);
        return (await json<{ id: string }>(res)).id;
      };
      const pending = await invite("pending@x.test");
      const revokedInvitation = await invite("revoked@x.test");
      expect(
        (await h.call("DELETE", `/v1/orgs/${h.orgId}/invitations/${revokedInvitation}`, { as: h.owner })).status,
      ).toBe(204);

      // Ended a month ago or more: gone after the run.
      const oldTokens = [
        await token({ revokedAt: new Date(now - 31 * DAY) }),
        await token({ expiresAt: new Date(now - 31 * DAY) }),
        // Expired long ago, revoked only lately: it stopped working at its expiry.
        await token({ expiresAt: new Date(now - 40 * DAY), revokedAt: new Date(now - DAY) }),
        await token({ revokedAt: new Date(now - 31 * DAY), expiresAt: new Date(now + 300 * DAY) }),
      ];
      const oldInvitations = [
        await invitation("accepted", new Date(now - 25 * DAY), new Date(now - 31 * DAY)),
        await invitation("declined", new Date(now - 25 * DAY), new Date(now - 31 * DAY)),
        await invitation("revoked", new Date(now - 25 * DAY), new Date(now - 31 * DAY)),
        await invitation("pending", new Date(now - 31 * DAY)),
      ];
      // Ended less than a month ago: kept, and listed as they are.
      const recentTokens = [
        await token({ revokedAt: new Date(now - 29 * DAY) }),
        await token({ expiresAt: new Date(now - 29 * DAY) }),
      ];
      const recentInvitations = [
        await invitation("accepted", new Date(now + 5 * DAY), new Date(now - 2 * DAY)),
        await invitation("pending", new Date(now - 29 * DAY)),
      ];
      // A session opened with an old token (long expired) and a device request that minted it.
      const [oldToken] = oldTokens;
      await db()
        .insertInto("browser_sessions")
        .values({
          id: newId("browserSession"),
          user_id: userId,
          api_token_id: oldToken!,
          via: "api_token",
          secret_hash: randomBytes(32).toString("hex"),
          user_agent: null,
          expires_at: new Date(now - 2 * DAY),
          last_used_at: null,
          revoked_at: null,
        })
        .execute();

      const tokensBefore = await ids("api_tokens");
      const invitationsBefore = await ids("invitations");
      const tokensListed = await listed("api-tokens");
      const invitationsListed = await listed("invitations");
      for (const id of [forever.id, expiring.id, revokedNow.id, ...oldTokens, ...recentTokens]) {
        expect(tokensListed.map((t) => t.id)).toContain(id);
      }

      expect(await h.service.signInPruning.run(new Date(now))).toEqual({
        deviceRequests: 0,
        sessions: 0,
        apiTokens: 4,
        invitations: 4,
      });
      expect(await ids("api_tokens")).toEqual(tokensBefore.filter((id) => !oldTokens.includes(id)));
      expect(await ids("invitations")).toEqual(invitationsBefore.filter((id) => !oldInvitations.includes(id)));
      expect(await ids("api_tokens")).toEqual(expect.arrayContaining([...recentTokens, revokedNow.id]));
      expect(await ids("invitations")).toEqual(expect.arrayContaining([...recentInvitations, revokedInvitation]));
      // The lists are what they were, less what was pruned; a pruned token is not found.
      expect(await listed("api-tokens")).toEqual(tokensListed.filter((t) => !oldTokens.includes(t.id)));
      expect(await listed("invitations")).toEqual(invitationsListed.filter((i) => !oldInvitations.includes(i.id)));
      expect((await h.call("GET", `/v1/api-tokens/${oldToken}`, { as: h.owner })).status).toBe(404);
      // The session went with its token.
      expect(
        await db().selectFrom("browser_sessions").select("id").where("api_token_id", "=", oldToken!).execute(),
      ).toEqual([]);
      // What is live still works: the tokens, the bootstrap token, the pending invitation.
      for (const live of [forever.token, expiring.token]) {
        expect((await h.principalOf(live)).type).toBe("api_token");
      }
      expect((await h.principalOf(BOOTSTRAP_TOKEN)).id).toBe(h.owner.id);
      const invitee = await h.oidcUser("pending@x.test");
      expect((await h.call("POST", `/v1/invitations/${pending}/accept`, { as: invitee })).status).toBe(200);

      // A month on, what ended today has gone too; nothing live ever goes.
      const later = await h.service.signInPruning.run(new Date(now + 31 * DAY));
      expect(later.apiTokens).toBe(recentTokens.length + 1);
      expect(later.invitations).toBe(recentInvitations.length + 2);
      expect(await ids("api_tokens")).toEqual(expect.arrayContaining([forever.id, expiring.id]));
      expect(await ids("api_tokens")).not.toContain(revokedNow.id);
      expect(await ids("invitations")).toEqual([]);
      // Years on, only the tokens without expiry remain (the bootstrap token among them).
      await h.service.signInPruning.run(new Date(now + 3650 * DAY));
      const remaining = await db().selectFrom("api_tokens").select(["id", "expires_at"]).execute();
      expect(remaining.map((r) => r.id)).toContain(forever.id);
      expect(remaining.map((r) => r.id)).not.toContain(expiring.id);
      expect(remaining.every((r) => r.expires_at === null)).toBe(true);
      expect((await h.principalOf(BOOTSTRAP_TOKEN)).id).toBe(h.owner.id);
    },
  );

  it.skipIf(!target.available)(`finds the rows to delete through an index${target.reason}`, async () => {
    const ended = { api_tokens: sql`least(revoked_at, expires_at)`, invitations: sql`least(responded_at, expires_at)` };
    for (const table of ["api_tokens", "invitations"] as const) {
      const plan = await db()
        .transaction()
        .execute(async (trx) => {
          // With sequential scans priced out, only an index on when the row ended avoids one.
          await sql`set local enable_seqscan = off`.execute(trx);
          return trx
            .selectFrom(table)
            .select("id")
            .where(ended[table], "<", new Date())
            .limit(1000)
            .forUpdate()
            .skipLocked()
            .explain();
        });
      const text = plan.map((row) => Object.values(row).join(" ")).join("\n");
      expect(text).toContain(`${table}_ended_at`);
      expect(text).not.toMatch(/Seq Scan/);
    }
  });
});
