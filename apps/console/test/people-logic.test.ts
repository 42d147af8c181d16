import { describe, expect, it } from "vitest";
import { secretFields } from "../src/lib/credential-kinds.ts";
import { linkToken } from "../src/lib/invitation-link.ts";
import { memberAllowance } from "../src/lib/member-guard.ts";
import { allows } from "../src/lib/permissions.ts";

describe("invitation links", () => {
  it("reads the token from the fragment only", () => {
    expect(linkToken("#token=abc_DEF-123")).toBe("abc_DEF-123");
    expect(linkToken("")).toBe("");
    expect(linkToken("#other=1")).toBe("");
  });
});

describe("the members page's guard", () => {
  const admin = allows("members:manage", { org: "admin" });
  const viewer = allows("members:manage", { org: "viewer" });
  it("states the role matrix first, then the last-owner guard, then owners-only", () => {
    expect(memberAllowance(viewer, { role: "member" }, 2, "viewer")).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/Needs the admin role/),
    });
    expect(memberAllowance(admin, { role: "owner" }, 1, "owner")).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/last owner/),
    });
    expect(memberAllowance(admin, { role: "owner" }, 2, "admin")).toMatchObject({ allowed: false });
    expect(memberAllowance(admin, { role: "owner" }, 2, "owner")).toEqual({ allowed: true });
    expect(memberAllowance(admin, { role: "member" }, 1, "admin")).toEqual({ allowed: true });
  });
});

describe("credential rotation", () => {
  it("asks for the secret fields of the kind only", () => {
    expect(secretFields("aws-keys")).toEqual(["secretAccessKey", "sessionToken"]);
    expect(secretFields("http-header")).toEqual(["value"]);
    expect(secretFields("unknown")).toEqual([]);
  });
});
