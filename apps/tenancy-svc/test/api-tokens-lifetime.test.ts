import type { Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOOTSTRAP_TOKEN, json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const ORIGIN = "http://platform.test";
const HOUR = 3_600_000;

/**
 * A token never outlives the token it was made with: a short-lived token that could mint a
 * token without expiry (or a 30-day device sign-in) would turn a leak of one hour into a leak
 * for good.
 */
describe("a token minted by a token expires no later than it (PGlite)", () => {
  let database: Database;
  let h: Awaited<ReturnType<typeof startActivated>>;
  beforeEach(async () => {
    database = await openDatabase("pglite://memory");
    h = await startActivated(database);
  });
  afterEach(async () => {
    await stopTenancies();
    await database.close();
  });

  async function expiringToken(expiresAt: string): Promise<string> {
    const res = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, {
      as: h.owner,
      body: { name: "short", expiresAt },
    });
    expect(res.status).toBe(201);
    return (await json<{ token: string }>(res)).token;
  }

  /** A device sign-in approved with `token` pasted into the approval page; the token it mints. */
  async function deviceSignIn(token: string): Promise<{ token: string; expiresAt: string }> {
    const started = await json<{ deviceCode: string; userCode: string }>(
      await h.call("POST", "/v1/auth/device", { body: { clientName: "cli" } }),
    );
    const approved = await h.call("POST", "/device", {
      body: new URLSearchParams({ userCode: started.userCode, decision: "approve", token }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
    });
    expect(approved.status).toBe(200);
    const polled = await h.call("POST", "/v1/auth/device/token", { body: { deviceCode: started.deviceCode } });
    expect(polled.status).toBe(200);
    return json(polled);
  }

  it("inherits its creator's expiry when none is asked for, and refuses a later one", async () => {
    const expiresAt = new Date(Date.now() + HOUR).toISOString();
    const creator = await h.principalOf(await expiringToken(expiresAt));
    const path = `/v1/orgs/${h.orgId}/api-tokens`;

    const inherited = await h.call("POST", path, { as: creator, body: { name: "child" } });
    expect(inherited.status).toBe(201);
    expect(new Date((await json<{ expiresAt: string }>(inherited)).expiresAt).getTime()).toBe(
      new Date(expiresAt).getTime(),
    );

    const later = await h.call("POST", path, {
      as: creator,
      body: { name: "later", expiresAt: new Date(Date.now() + 2 * HOUR).toISOString() },
    });
    expect(later.status).toBe(403);
    expect(later.headers.get("content-type")).toContain("application/problem+json");
    expect((await json<{ detail: string }>(later)).detail).toContain(expiresAt);

    const sooner = await h.call("POST", path, {
      as: creator,
      body: { name: "sooner", expiresAt: new Date(Date.now() + HOUR / 2).toISOString() },
    });
    expect(sooner.status).toBe(201);

    // A person (or a token without expiry) still mints tokens without one.
    const forever = await h.call("POST", path, { as: h.owner, body: { name: "forever" } });
    expect((await json<{ expiresAt?: string }>(forever)).expiresAt).toBeUndefined();
  });

  it("a browser session opened with an expiring personal token mints no token that outlives it", async () => {
    // The device sign-in's token: the owner's, bound to nothing, 30 days. A session opened with
    // it acts as the user, and ends when the token does: so must what the session mints.
    const device = await deviceSignIn(BOOTSTRAP_TOKEN);
    const opened = await h.call("POST", "/v1/auth/sessions", { as: await h.principalOf(device.token) });
    expect(opened.status).toBe(201);
    const secret = opened.headers.get("set-cookie")!.split(";")[0]!.split("=").slice(1).join("=");
    const resolved = await h.internal("POST", "/internal/authn/session", { secret });
    expect(resolved.status).toBe(200);
    const { principal } = await json<{ principal: Principal }>(resolved);
    const minted = await h.call("POST", `/v1/orgs/${h.orgId}/api-tokens`, { as: principal, body: { name: "m" } });
    expect(minted.status).toBe(201);
    const expires = (await json<{ expiresAt?: string }>(minted)).expiresAt;
    expect(expires && new Date(expires).getTime()).toBe(new Date(device.expiresAt).getTime());
  });

  it("a device sign-in approved with an expiring token ends when that token does", async () => {
    const expiresAt = new Date(Date.now() + HOUR).toISOString();
    const token = await expiringToken(expiresAt);
    const polled = await deviceSignIn(token);
    expect(new Date(polled.expiresAt).getTime()).toBe(new Date(expiresAt).getTime());
    const listed = await json<{ expiresAt?: string }>(
      await h.call("GET", `/v1/api-tokens/${(await h.principalOf(polled.token)).id}`, { as: h.owner }),
    );
    expect(new Date(listed.expiresAt!).getTime()).toBe(new Date(expiresAt).getTime());
  });
});
