import { describe, expect, it } from "vitest";
import { trustedOidcEmail, unvouchedOidcEmail } from "../src/oidc-email.ts";

const email = "ada@acme.test";

describe("trustedOidcEmail: the address a token vouches for under OIDC_EMAIL_TRUST", () => {
  it("verified: only with email_verified true, the boolean or the string", () => {
    expect(trustedOidcEmail({ email, email_verified: true }, "verified")).toBe(email);
    expect(trustedOidcEmail({ email, email_verified: "true" }, "verified")).toBe(email);
    for (const claim of [undefined, false, "false", "TRUE", 1, null]) {
      expect(trustedOidcEmail({ email, email_verified: claim }, "verified"), String(claim)).toBeUndefined();
    }
  });

  it("present: any the token does not mark unverified (false, or the string)", () => {
    expect(trustedOidcEmail({ email }, "present")).toBe(email);
    expect(trustedOidcEmail({ email, email_verified: true }, "present")).toBe(email);
    expect(trustedOidcEmail({ email, email_verified: false }, "present")).toBeUndefined();
    expect(trustedOidcEmail({ email, email_verified: "false" }, "present")).toBeUndefined();
  });

  it("never what is not an address-sized string", () => {
    for (const trust of ["verified", "present"] as const) {
      expect(trustedOidcEmail({ email_verified: true }, trust)).toBeUndefined();
      expect(trustedOidcEmail({ email: "", email_verified: true }, trust)).toBeUndefined();
      expect(trustedOidcEmail({ email: ["a@b.c"], email_verified: true }, trust)).toBeUndefined();
      expect(trustedOidcEmail({ email: `${"a".repeat(320)}@b.c`, email_verified: true }, trust)).toBeUndefined();
    }
  });

  it("unvouched: the address the token carries but does not vouch for, exactly what trusted leaves out", () => {
    expect(unvouchedOidcEmail({ email }, "verified")).toBe(email);
    expect(unvouchedOidcEmail({ email, email_verified: false }, "verified")).toBe(email);
    expect(unvouchedOidcEmail({ email, email_verified: true }, "verified")).toBeUndefined();
    expect(unvouchedOidcEmail({ email }, "present")).toBeUndefined();
    expect(unvouchedOidcEmail({ email, email_verified: "false" }, "present")).toBe(email);
    expect(unvouchedOidcEmail({ email: ["a@b.c"] }, "verified")).toBeUndefined();
    expect(unvouchedOidcEmail({ email: `${"a".repeat(320)}@b.c` }, "verified")).toBeUndefined();
  });
});
