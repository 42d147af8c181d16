import { describe, expect, it } from "vitest";
import { type GroupableRecord, groupAuditRecords } from "../src/lib/audit-groups.ts";

interface Row extends GroupableRecord {
  id: string;
  action: string;
}

const row = (id: string, time: string, action: string, requestId?: string): Row => ({
  id,
  time: `2026-01-01T00:00:${time}Z`,
  action,
  source: action.includes(".") ? "domain" : "request",
  ...(requestId ? { requestId } : {}),
});
const shape = (rows: Row[]) =>
  groupAuditRecords(rows).map((g) => [g.record.id, ...g.related.map((r) => `+${r.id}`)].join(" "));

describe("the records of one request, grouped", () => {
  it("shows a change once: the domain record, with the request record folded under it", () => {
    const groups = groupAuditRecords([
      row("req", "02.000002", "updateOrganization", "r1"),
      row("dom", "02.000001", "organization.updated", "r1"),
    ]);
    expect(groups).toHaveLength(1);
    expect(groups[0]?.record.action).toBe("organization.updated");
    expect(groups[0]?.related.map((r) => r.action)).toEqual(["updateOrganization"]);
  });

  it("leaves records without a request id, or alone in their request, as they are", () => {
    const rows = [
      row("a", "05", "session.signed_in"),
      row("b", "04", "deleteProject", "r2"),
      row("c", "03", "project.deleted", "r3"),
      row("d", "02", "sandbox.stopped"),
    ];
    expect(groupAuditRecords(rows)).toEqual(rows.map((record) => ({ record, related: [] })));
  });

  it("keeps order by time, a group standing where its newest record stood", () => {
    const rows = [
      row("req1", "09", "updateOrganization", "r1"),
      row("alone", "08", "session.signed_in"),
      row("dom1", "07", "organization.updated", "r1"),
      row("dom2", "06", "team.created", "r2"),
      row("req2", "05", "createTeam", "r2"),
      row("req3", "04", "createProject", "r3"),
    ];
    expect(shape(rows)).toEqual(["dom1 +req1", "alone", "dom2 +req2", "req3"]);
    // The same page in another order comes out the same.
    expect(shape([...rows].reverse())).toEqual(["dom1 +req1", "alone", "dom2 +req2", "req3"]);
  });

  it("orders by the microseconds Date does not parse", () => {
    const rows = [
      row("old", "01.000001", "createTeam", "r1"),
      row("new", "01.000009", "session.signed_in"),
      row("dom", "01.000005", "team.created", "r1"),
    ];
    expect(shape(rows)).toEqual(["new", "dom +old"]);
  });

  it("folds every other record of the request, newest first, under its newest domain record", () => {
    const rows = [
      row("req", "09", "addTeamMembers", "r1"),
      row("dom-b", "08", "team.member_added", "r1"),
      row("dom-a", "07", "team.member_added", "r1"),
      row("other", "06", "project.created", "r2"),
    ];
    expect(shape(rows)).toEqual(["dom-b +req +dom-a", "other"]);
  });

  it("shows the newest record of a request that has no domain record", () => {
    const rows = [row("retry", "02", "deleteTeam", "r1"), row("first", "01", "deleteTeam", "r1")];
    expect(shape(rows)).toEqual(["retry +first"]);
  });

  it("groups only what the page holds", () => {
    expect(groupAuditRecords([])).toEqual([]);
    expect(shape([row("dom", "01", "organization.updated", "r1")])).toEqual(["dom"]);
  });
});
