import { describe, expect, it } from "vitest";
import { activatedOnPglite, json } from "./fixtures/harness.ts";

// RFC 3339 lets an offset move 9999-12-31T23:00 into the year 10000; JavaScript writes that year
// as +010000, which the database refused: the token was a 500.
describe("an API token's expiry past the year 9999 (PGlite)", () => {
  const suite = activatedOnPglite();

  it("is a 400 naming expiresAt, and the last moment of 9999 is still an expiry", async () => {
    const { h } = suite;
    const path = `/v1/orgs/${h.orgId}/api-tokens`;
    const late = await h.call("POST", path, {
      as: h.owner,
      body: { name: "far", expiresAt: "9999-12-31T23:00:00-17:00" },
    });
    expect(late.status).toBe(400);
    expect(late.headers.get("content-type")).toContain("application/problem+json");
    expect((await json<{ errors: { pointer: string }[] }>(late)).errors[0]?.pointer).toBe("/body/expiresAt");

    const last = await h.call("POST", path, {
      as: h.owner,
      body: { name: "far", expiresAt: "9999-12-31T23:59:59.999Z" },
    });
    expect(last.status).toBe(201);
    expect((await json<{ expiresAt: string }>(last)).expiresAt).toBe("9999-12-31T23:59:59.999Z");
  });
});
