import { AUDIT_RECORDED, type AuditRecorded, DEFAULT_OBJECT_LIMITS } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const CLIENT_ID = "agentplane-console";
const CLIENT_SECRET = "console-secret";

describe("console sign-in at the sessions limit (PGlite, local identity provider)", () => {
  let database: Database;
  let provider: Awaited<ReturnType<typeof startOidcProvider>>;
  let h: Awaited<ReturnType<typeof startActivated>>;
  const events: AuditRecorded[] = [];

  beforeAll(async () => {
    provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    database = await openDatabase("pglite://memory");
    h = await startActivated(database, {
      oidc: { issuer: provider.url, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET },
      objectLimits: { ...DEFAULT_OBJECT_LIMITS, sessions: 1 },
    });
    await h.bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => {
      events.push(e.data);
    });
  });
  afterAll(async () => {
    await stopTenancies();
    await database?.close();
    await provider?.close();
  });

  /** The browser's way through the identity provider, up to the callback's answer. */
  async function signIn(next: string): Promise<Response> {
    const start = await h.call("GET", `/sign-in/oidc?next=${encodeURIComponent(next)}`);
    const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0]!;
    const back = await fetch(new URL(start.headers.get("location")!), { redirect: "manual" });
    const callback = new URL(back.headers.get("location")!);
    return h.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie } });
  }
  const sessionCookieOf = (res: Response) =>
    res.headers.getSetCookie().find((c) => c.startsWith("agentplane_session="));

  it("sends the person back to the sign-in page with the limit, opens nothing, and records the refusal", async () => {
    provider.state.user = { sub: "person-limit", email: "lee@acme.test", emailVerified: true, name: "Lee Limit" };
    const first = await signIn("/projects");
    expect(first.headers.get("location")).toBe("/projects");
    expect(sessionCookieOf(first)).toBeDefined();

    await h.settle();
    const before = events.length;
    const refused = await signIn("/projects");
    expect(refused.status).toBe(302);
    const location = new URL(refused.headers.get("location")!, "http://platform.test");
    expect(location.pathname).toBe("/sign-in");
    expect(location.searchParams.get("next")).toBe("/projects");
    // The console shows its own words for the code; the limit's detail is in the record below.
    expect(location.searchParams.get("error")).toBe("sessions_limit");
    expect(sessionCookieOf(refused)).toBeUndefined();
    await h.settle();
    expect(events.slice(before).filter((e) => e.action.startsWith("session."))).toEqual([
      expect.objectContaining({
        action: "session.sign_in_refused",
        outcome: "denied",
        details: expect.objectContaining({ reason: expect.stringContaining("OBJECT_LIMITS=sessions=<n>") }),
      }),
    ]);

    // Signing out of the first session frees the slot for the next sign-in.
    const user = await database.kysely
      .withSchema("tenancy")
      .selectFrom("users")
      .select("id")
      .where("email", "=", "lee@acme.test")
      .executeTakeFirstOrThrow();
    const as = { type: "user" as const, id: user.id };
    const sessions = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/auth/sessions", { as }));
    expect(sessions.items).toHaveLength(1);
    expect((await h.call("DELETE", `/v1/auth/sessions/${sessions.items[0]!.id}`, { as })).status).toBe(204);
    const again = await signIn("/projects");
    expect(again.headers.get("location")).toBe("/projects");
    expect(sessionCookieOf(again)).toBeDefined();
  });
});
