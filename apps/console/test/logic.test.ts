import { describe, expect, it } from "vitest";
import {
  auditApiQuery,
  nextPage,
  previousPage,
  readAuditView,
  withFilters,
  writeAuditView,
} from "../src/lib/audit-query.ts";
import { parseBindingVersion } from "../src/lib/binding-version.ts";
import { auditCsvHeader, auditCsvRows, csvField } from "../src/lib/csv.ts";
import { parseExpiry } from "../src/lib/expiry.ts";
import { CHANNEL, exitCodeOf, frame, resizeFrame } from "../src/lib/k8s-channel.ts";
import { allows, grantableRoles, missingOrgPermissions, projectRoleOf } from "../src/lib/permissions.ts";
import { ApiError, describeError } from "../src/lib/problem.ts";

describe("token lifetimes", () => {
  const now = Date.parse("2026-01-01T00:00:00.000Z");
  it("turns 30d, 12h, 2w and 1y into an absolute expiry", () => {
    expect(parseExpiry("30d", now).expiresAt).toBe("2026-01-31T00:00:00.000Z");
    expect(parseExpiry(" 12H ", now).expiresAt).toBe("2026-01-01T12:00:00.000Z");
    expect(parseExpiry("2w", now).expiresAt).toBe("2026-01-15T00:00:00.000Z");
    expect(parseExpiry("1y", now).expiresAt).toBe("2027-01-01T00:00:00.000Z");
  });
  it("means no expiry when empty and refuses anything else", () => {
    expect(parseExpiry("", now)).toEqual({});
    expect(parseExpiry("never", now)).toEqual({});
    expect(parseExpiry("forever", now).error).toMatch(/30d/);
    expect(parseExpiry("0d", now).error).toMatch(/more than zero/);
    expect(parseExpiry("11y", now).error).toMatch(/ten years/);
  });
});

describe("the audit view in the URL", () => {
  it("round-trips filters and cursor, and pages forward and back through the trail", () => {
    const first = withFilters({ action: "updateOrganization", outcome: "success" });
    const second = nextPage(first, "2026-01-02T00:00:00.000001Z");
    const third = nextPage(second, "2026-01-01T00:00:00.000001Z");
    const parsed = readAuditView(writeAuditView(third));
    expect(parsed).toEqual(third);
    expect(previousPage(parsed)).toEqual(second);
    expect(previousPage(previousPage(parsed))).toEqual({ filters: first.filters, trail: [] });
    expect(previousPage(first)).toEqual(first);
  });
  it("asks the API with ISO instants and the page's cursor", () => {
    const view = nextPage(withFilters({ from: "2026-01-01T10:00", actor: "usr_1" }), "c1");
    const query = auditApiQuery(view, 50);
    expect(query).toMatchObject({ limit: 50, actor: "usr_1", cursor: "c1" });
    expect(query.from).toBe(new Date("2026-01-01T10:00").toISOString());
  });
});

describe("CSV export", () => {
  it("quotes fields with commas, quotes and newlines, and defuses spreadsheet formulas", () => {
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(csvField("line\nbreak")).toBe('"line\nbreak"');
    expect(csvField("=SUM(A1)")).toBe("'=SUM(A1)");
    expect(csvField(undefined)).toBe("");
  });
  it("writes one line per record under the header", () => {
    const rows = auditCsvRows([
      {
        id: "e1",
        time: "2026-01-01T00:00:00.000001Z",
        occurredAt: "2026-01-01T00:00:00Z",
        principal: { type: "user", id: "usr_1" },
        action: "createProject",
        source: "request",
        targets: {},
        outcome: "success",
        status: 201,
      },
    ]);
    expect(auditCsvHeader()).toMatch(/^time,action,outcome,status,principalType/);
    expect(rows).toBe("2026-01-01T00:00:00.000001Z,createProject,success,201,user,usr_1,,,,,,,\r\n");
  });
});

describe("what a role may do", () => {
  it("disables with the reason the role lacks", () => {
    expect(allows("projects:create", { org: "member" })).toEqual({ allowed: true });
    expect(allows("audit:read", { org: "member" })).toEqual({
      allowed: false,
      reason: "Needs the admin role in the organization (you are member)",
    });
    expect(allows("sandboxes:write", { org: "viewer", project: "viewer" }).allowed).toBe(false);
    expect(allows("sandboxes:write", { org: "member", project: "developer" }).allowed).toBe(true);
  });
  it("waits, saying so, while the role is not known yet (never names a role the person lacks)", () => {
    expect(allows("sandboxes:write", {})).toEqual({ allowed: false, reason: "Checking your role…" });
    expect(allows("audit:read", {})).toEqual({ allowed: false, reason: "Checking your role…" });
  });
  it("lists what a viewer lacks, hands out at most one's own role, and admins administer every project", () => {
    const missing = missingOrgPermissions("viewer").map((m) => m.permission);
    expect(missing).toContain("projects:create");
    expect(missing).not.toContain("org:read");
    expect(missingOrgPermissions("owner")).toEqual([]);
    expect(grantableRoles("member")).toEqual(["member", "viewer"]);
    expect(projectRoleOf("admin")).toBe("admin");
    expect(projectRoleOf("member", "developer")).toBe("developer");
    expect(projectRoleOf("viewer")).toBe("viewer");
  });
});

describe("the exec stream's frames", () => {
  it("prefixes the channel and reads the exit code of a status", () => {
    expect([...frame(CHANNEL.stdin, "ls\n")]).toEqual([0, 108, 115, 10]);
    expect(new TextDecoder().decode(resizeFrame(80, 24).subarray(1))).toBe('{"Width":80,"Height":24}');
    expect(exitCodeOf('{"status":"Success"}')).toBe(0);
    expect(exitCodeOf('{"status":"Failure","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}')).toBe(3);
    expect(exitCodeOf("not json")).toBeUndefined();
  });
});

describe("problems", () => {
  it("names the rule of a policy denial and the field of a validation error", () => {
    const denied = new ApiError(403, {
      type: "https://agentplane.dev/problems/policy-denied",
      detail: "Exec is denied by policy rule no-exec",
      ruleId: "no-exec",
    });
    expect(denied.ruleId).toBe("no-exec");
    expect(describeError(denied)).toBe("Exec is denied by policy rule no-exec (rule no-exec)");
    const invalid = new ApiError(400, { errors: [{ pointer: "/body/name", message: "Required" }] });
    expect(invalid.fieldError("name")).toBe("Required");
    expect(invalid.ruleId).toBeUndefined();
  });
});

describe("a binding's version as typed", () => {
  it("follows the latest, pins a version number, and refuses anything else before asking the API", () => {
    expect(parseBindingVersion("latest")).toEqual({ version: "latest" });
    expect(parseBindingVersion(" ")).toEqual({ version: "latest" });
    expect(parseBindingVersion(" 3 ")).toEqual({ version: 3 });
    for (const bad of ["abc", "0", "1.5", "-2", "2x"]) {
      expect(parseBindingVersion(bad).error, bad).toBe("latest, or a version number such as 1 or 2");
    }
  });
});
