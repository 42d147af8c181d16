import { internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { databaseTargets } from "@agentplane/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, json, startActivated, stopTenancies } from "./fixtures/harness.ts";
import { openSession } from "./fixtures/sessions.ts";

/**
 * A session opened from another one (the cookie presented to `POST /v1/auth/sessions`) ends with
 * it: signing out or revoking a session ends every session opened from it, and those opened from
 * them, so a copy of a session cannot keep a person signed in after they signed out.
 */
describe.each(await databaseTargets())("sessions opened from a session ($name)", (target) => {
  let cleanup: (() => Promise<void>) | undefined;
  const suite = {} as { h: Awaited<ReturnType<typeof startActivated>> };
  beforeAll(async () => {
    if (!target.available) return;
    const opened = await target.open();
    cleanup = opened.cleanup;
    suite.h = await startActivated(opened.database);
  });
  afterAll(async () => {
    await stopTenancies();
    await cleanup?.();
  });

  const open = (as: Principal) => openSession(suite.h, as);
  const resolveStatus = async (secret: string) =>
    (await suite.h.internal("POST", internalResolveSessionRoute.path, { secret })).status;
  const listed = async (as: Principal) => {
    const res = await suite.h.call("GET", "/v1/auth/sessions", { as });
    expect(res.status).toBe(200);
    return (await json<{ items: { id: string }[] }>(res)).items.map((s) => s.id);
  };

  it.skipIf(!target.available)("signing out a session ends every session opened from it, transitively", async () => {
    const { h } = suite;
    const vera = await addMember(h, h.owner, h.orgId, "vera@chain.test", "member");
    const a = await open(vera);
    const b = await open(a.principal);
    const c = await open(b.principal);
    const aside = await open(vera);
    expect(await listed(vera)).toEqual(expect.arrayContaining([a.id, b.id, c.id, aside.id]));

    expect((await h.call("DELETE", "/v1/auth/session", { as: a.principal })).status).toBe(204);

    expect(await resolveStatus(a.secret)).toBe(401);
    expect(await resolveStatus(b.secret)).toBe(401);
    expect(await resolveStatus(c.secret)).toBe(401);
    expect(await resolveStatus(aside.secret)).toBe(200);
    const left = await listed(vera);
    expect(left).toContain(aside.id);
    expect(left).not.toContain(a.id);
    expect(left).not.toContain(b.id);
    expect(left).not.toContain(c.id);
    // A revoked session cannot open another one.
    expect((await h.call("POST", "/v1/auth/sessions", { as: b.principal })).status).toBe(401);
  });

  it.skipIf(!target.available)("a session resolves with the sessions it was opened from, nearest first", async () => {
    const { h } = suite;
    const yara = await addMember(h, h.owner, h.orgId, "yara@chain.test", "member");
    const a = await open(yara);
    const b = await open(a.principal);
    const c = await open(b.principal);
    const ancestors = async (secret: string) =>
      (
        await json<{ ancestorSessionIds?: string[] }>(
          await h.internal("POST", internalResolveSessionRoute.path, { secret }),
        )
      ).ancestorSessionIds;
    expect(await ancestors(a.secret)).toBeUndefined();
    expect(await ancestors(b.secret)).toEqual([a.id]);
    expect(await ancestors(c.secret)).toEqual([b.id, a.id]);
  });

  it.skipIf(!target.available)("revoking a session ends those opened from it, not its parent", async () => {
    const { h } = suite;
    const wade = await addMember(h, h.owner, h.orgId, "wade@chain.test", "member");
    const a = await open(wade);
    const b = await open(a.principal);
    const c = await open(b.principal);

    expect((await h.call("DELETE", `/v1/auth/sessions/${b.id}`, { as: a.principal })).status).toBe(204);

    expect(await resolveStatus(a.secret)).toBe(200);
    expect(await resolveStatus(b.secret)).toBe(401);
    expect(await resolveStatus(c.secret)).toBe(401);
    const left = await listed(wade);
    expect(left).toContain(a.id);
    expect(left).not.toContain(b.id);
    expect(left).not.toContain(c.id);
    // The chain's end is revoked already: naming it again finds no open session.
    expect((await h.call("DELETE", `/v1/auth/sessions/${c.id}`, { as: a.principal })).status).toBe(404);
  });
});
