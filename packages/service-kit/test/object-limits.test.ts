import { describe, expect, it } from "vitest";
import { limitExceeded } from "../src/index.ts";

describe("the limit-exceeded problem", () => {
  it("says what frees a slot of each kind: a delete, a revoke or a stop", () => {
    const detail = (kind: Parameters<typeof limitExceeded>[0]) => limitExceeded(kind, 7, "organization").detail;
    expect(detail("connectors")).toContain("its limit. Delete one, or have the operator raise");
    for (const kind of ["api-tokens", "personal-api-tokens", "invitations", "sessions"] as const) {
      expect(detail(kind), kind).toContain("its limit. Revoke one, or have the operator raise");
    }
    expect(detail("running-sandboxes")).toContain("its limit. Stop one,");
    expect(limitExceeded("sessions", 7, "user")).toMatchObject({
      status: 409,
      extensions: { kind: "sessions", limit: 7, setting: "OBJECT_LIMITS" },
    });
    expect(detail("sessions")).toContain("OBJECT_LIMITS=sessions=<n>");
  });
});
