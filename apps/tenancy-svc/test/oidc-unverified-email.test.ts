import { internalResolveSessionRoute, type Principal } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { startOidcProvider } from "@agentplane/testkit/oidc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TENANCY_SCHEMA } from "../src/db/schema.ts";
import { json, startActivated, stopTenancies } from "./fixtures/harness.ts";

const CLIENT_ID = "agentplane-console";
const CLIENT_SECRET = "console-secret";

/**
 * Invitations are addressed to an email: whoever the identity provider vouches for as its owner
 * may accept. A provider that lets anyone type an address says so with `email_verified: false`,
 * or says nothing (Entra ID's mutable `email`): by default (OIDC_EMAIL_TRUST=verified) only an
 * address the ID token vouches for is the person's; `present` takes any not marked unverified.
 */
describe.each([
  ["verified", undefined],
  ["present", "present"],
] as const)(
  "an email the identity provider has not verified, OIDC_EMAIL_TRUST=%s (PGlite, local identity provider)",
  (_, emailTrust) => {
    let database: Database;
    let provider: Awaited<ReturnType<typeof startOidcProvider>>;
    let h: Awaited<ReturnType<typeof startActivated>>;

    beforeAll(async () => {
      provider = await startOidcProvider({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
      database = await openDatabase("pglite://memory");
      h = await startActivated(database, {
        oidc: {
          issuer: provider.url,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          ...(emailTrust ? { emailTrust } : {}),
        },
      });
    });
    afterAll(async () => {
      await stopTenancies();
      await database?.close();
      await provider?.close();
    });

    /** An invitation of the organization to `email`; its id. */
    async function invite(email: string): Promise<string> {
      const invited = await h.call("POST", `/v1/orgs/${h.orgId}/invitations`, {
        as: h.owner,
        body: { email, role: "admin" },
      });
      expect(invited.status).toBe(201);
      return (await json<{ id: string }>(invited)).id;
    }

    /** Signs in through the console's OIDC flow as the provider's current user; that user's principal. */
    async function signIn(): Promise<Principal> {
      const start = await h.call("GET", "/sign-in/oidc?next=%2F");
      const cookie = (start.headers.get("set-cookie") ?? "").split(";")[0]!;
      const back = await fetch(new URL(start.headers.get("location")!), { redirect: "manual" });
      const callback = new URL(back.headers.get("location")!);
      const done = await h.call("GET", `${callback.pathname}${callback.search}`, { headers: { cookie } });
      expect(done.status).toBe(302);
      const secret = done.headers
        .getSetCookie()
        .find((c) => c.startsWith("agentplane_session="))!
        .split(";")[0]!
        .split("=")[1]!;
      const resolved = await h.internal("POST", internalResolveSessionRoute.path, { secret });
      return (await json<{ principal: Principal }>(resolved)).principal;
    }

    it("does not take an address marked unverified: the invitation to it is neither listed nor accepted", async () => {
      const invitationId = await invite("vic@acme.test");

      provider.state.user = { sub: "mallory-1", email: "vic@acme.test", emailVerified: false, name: "Mallory" };
      const mallory = await signIn();
      const mine = await json<{ items: unknown[] }>(await h.call("GET", "/v1/invitations", { as: mallory }));
      expect(mine.items).toEqual([]);
      const accept = await h.call("POST", `/v1/invitations/${invitationId}/accept`, { as: mallory });
      expect(accept.status).toBe(404);
      expect(accept.headers.get("content-type")).toContain("application/problem+json");

      // The provider's verified owner of the address still gets it.
      provider.state.user = { sub: "vic-1", email: "vic@acme.test", emailVerified: true, name: "Vic" };
      const vic = await signIn();
      const accepted = await h.call("POST", `/v1/invitations/${invitationId}/accept`, { as: vic });
      expect(accepted.status).toBe(200);
    });

    it(`${emailTrust ? "takes" : "does not take"} an address the ID token says nothing about`, async () => {
      const invitationId = await invite("wes@acme.test");
      provider.state.user = { sub: "silent-1", email: "wes@acme.test", name: "Silent" };
      const silent = await signIn();
      const mine = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/invitations", { as: silent }));
      const accept = await h.call("POST", `/v1/invitations/${invitationId}/accept`, { as: silent });
      if (emailTrust === "present") {
        expect(mine.items.map((i) => i.id)).toEqual([invitationId]);
        expect(accept.status).toBe(200);
      } else {
        expect(mine.items).toEqual([]);
        expect(accept.status).toBe(404);
      }
    });

    it("takes away an address stored before verification was required, at the next sign-in that does not vouch for it", async () => {
      const invitationId = await invite("val@acme.test");
      provider.state.user = { sub: "mallory-2", email: "val@acme.test", emailVerified: false, name: "Mallory" };
      const mallory = await signIn();
      // As a sign-in before decision 0036 left it: the unverified address stored as the user's.
      const users = database.forSchema<{ users: { id: string; email: string | null } }>(TENANCY_SCHEMA);
      await users.updateTable("users").set({ email: "Val@acme.test" }).where("id", "=", mallory.id).execute();
      const before = await json<{ items: { id: string }[] }>(await h.call("GET", "/v1/invitations", { as: mallory }));
      expect(before.items.map((i) => i.id)).toEqual([invitationId]);

      await signIn();
      const stored = await users.selectFrom("users").select("email").where("id", "=", mallory.id).executeTakeFirst();
      expect(stored?.email).toBeNull();
      const mine = await json<{ items: unknown[] }>(await h.call("GET", "/v1/invitations", { as: mallory }));
      expect(mine.items).toEqual([]);
      expect((await h.call("POST", `/v1/invitations/${invitationId}/accept`, { as: mallory })).status).toBe(404);

      // An address the provider does vouch for is kept, and one the token does not name is left alone.
      provider.state.user = { sub: "mallory-2", email: "mal@acme.test", emailVerified: true, name: "Mallory" };
      await signIn();
      provider.state.user = { sub: "mallory-2", email: "val@acme.test", emailVerified: false, name: "Mallory" };
      await signIn();
      const kept = await users.selectFrom("users").select("email").where("id", "=", mallory.id).executeTakeFirst();
      expect(kept?.email).toBe("mal@acme.test");
    });

    it('takes an address with email_verified "true", the string some providers send', async () => {
      const invitationId = await invite("sam@acme.test");
      provider.state.user = { sub: "sam-1", email: "sam@acme.test", emailVerified: "true", name: "Sam" };
      const sam = await signIn();
      expect((await h.call("POST", `/v1/invitations/${invitationId}/accept`, { as: sam })).status).toBe(200);
    });
  },
);
