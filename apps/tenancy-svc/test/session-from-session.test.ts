import { internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { activatedOnPglite, addMember, json } from "./fixtures/harness.ts";

/** Moves the clock forward (Date only: the database and timers are untouched). */
function later(ms: number): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + ms);
}

const HOUR = 3_600_000;

/**
 * A session lasts a working day, then its person signs in again. A session that opens another
 * one (the cookie presented to `POST /v1/auth/sessions`) must not be a way around that: the new
 * session ends when the one it came from does.
 */
describe("a session opened from a session (PGlite)", () => {
  const suite = activatedOnPglite();
  afterEach(() => vi.useRealTimers());

  const secretOf = (res: Response) => res.headers.get("set-cookie")!.split(";")[0]!.split("=").slice(1).join("=");
  const resolve = async (h: typeof suite.h, secret: string) => {
    const res = await h.internal("POST", internalResolveSessionRoute.path, { secret });
    return {
      status: res.status,
      body: res.status === 200 ? await json<{ principal: Principal; expiresAt: string }>(res) : undefined,
    };
  };

  it("ends when the session it was opened from ends", async () => {
    const { h } = suite;
    const una = await addMember(h, h.owner, h.orgId, "una@session.test", "member");
    const first = await h.call("POST", "/v1/auth/sessions", { as: una });
    expect(first.status).toBe(201);
    const firstSecret = secretOf(first);
    const resolved = (await resolve(h, firstSecret)).body!;

    later(11 * HOUR);
    const again = await h.call("POST", "/v1/auth/sessions", { as: resolved.principal });
    expect(again.status).toBe(201);
    const secondSecret = secretOf(again);
    const second = (await resolve(h, secondSecret)).body!;
    expect(Date.parse(second.expiresAt)).toBeLessThanOrEqual(Date.parse(resolved.expiresAt));

    later(2 * HOUR);
    expect((await resolve(h, firstSecret)).status).not.toBe(200);
    expect((await resolve(h, secondSecret)).status).not.toBe(200);
  });
});
