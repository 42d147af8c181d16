// The gateway's request records take the organization a service named for the resource it acted
// on, and remember it for the ids of the path, so that a later request the service refused before
// looking at its resource (a bad body) is still recorded in that organization's trail.
import { AUDIT_RECORDED, type AuditRecorded, type Principal, RESOURCE_ORG_HEADER } from "@agentplane/contracts";
import { MemoryBus } from "@agentplane/events";
import { describe, expect, it, vi } from "vitest";
import { type RequestAudit, RequestAuditor } from "../src/audit.ts";

const alice: Principal = { type: "user", id: "usr_alice", displayName: "Alice" };

function request(overrides: Partial<RequestAudit>): RequestAudit {
  return {
    principal: alice,
    operationId: "updateCluster",
    params: { clusterId: "cls_1" },
    status: 200,
    requestId: crypto.randomUUID(),
    ip: undefined,
    userAgent: undefined,
    method: "PATCH",
    path: "/v1/clusters/cls_1",
    ...overrides,
  };
}

const named = (orgId: string, status = 200, body?: unknown) =>
  new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { [RESOURCE_ORG_HEADER]: orgId } });

describe("request records of resources named by an id of their own", () => {
  it("name the organization the service answered with, and later the one learned for the path's ids", async () => {
    const bus = new MemoryBus();
    const records: AuditRecorded[] = [];
    await bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void records.push(e.data));
    const auditor = new RequestAuditor(bus);
    const byRequest = (id: string) => records.find((r) => r.requestId === id);

    const patched = request({ response: named("org_a") });
    auditor.record(patched);
    // The service refused a bad body before it looked at the cluster: the answer names no organization.
    const refused = request({ status: 400, response: new Response(null, { status: 400 }) });
    auditor.record(refused);
    // A cluster created in a project: its id belongs to the organization from now on.
    const created = request({
      operationId: "createCluster",
      params: { projectId: "prj_1" },
      status: 201,
      method: "POST",
      path: "/v1/projects/prj_1/clusters",
      response: named("org_b", 201, { id: "cls_2" }),
    });
    auditor.record(created);
    await auditor.settled();
    const rotated = request({
      operationId: "rotateClusterTunnelToken",
      params: { clusterId: "cls_2" },
      status: 400,
      method: "POST",
      path: "/v1/clusters/cls_2/rotate-tunnel-token",
    });
    auditor.record(rotated);
    const stranger = request({ params: { clusterId: "cls_9" }, status: 404, path: "/v1/clusters/cls_9" });
    auditor.record(stranger);
    await auditor.settled();

    await expect.poll(() => records.length).toBe(5);
    expect(byRequest(patched.requestId)?.orgId).toBe("org_a");
    expect(byRequest(refused.requestId)?.orgId).toBe("org_a");
    expect(byRequest(created.requestId)?.orgId).toBe("org_b");
    expect(byRequest(rotated.requestId)?.orgId).toBe("org_b");
    // An id no service named stays in the installation's trail.
    expect(byRequest(stranger.requestId)?.orgId).toBeUndefined();
    auditor.close();
  });

  it("records made soon go out after the turn, in order, named as the service named them; closing sends what waits", async () => {
    const bus = new MemoryBus();
    const records: AuditRecorded[] = [];
    await bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void records.push(e.data));
    const auditor = new RequestAuditor(bus);
    const spy = vi.spyOn(bus, "publish");
    const first = request({ resourceOrg: "org_a" });
    const second = request({ params: { clusterId: "cls_1" }, status: 400 });
    auditor.recordSoon(first);
    auditor.recordSoon(second);
    expect(spy).not.toHaveBeenCalled();
    await new Promise((resolve) => setImmediate(resolve));
    expect(spy.mock.calls.map(([, data]) => (data as AuditRecorded).requestId)).toEqual([
      first.requestId,
      second.requestId,
    ]);
    await expect.poll(() => records.length).toBe(2);
    // The path's cluster was learned from the first record's organization.
    expect(records.map((r) => r.orgId)).toEqual(["org_a", "org_a"]);

    const last = request({ resourceOrg: "org_c" });
    auditor.recordSoon(last);
    auditor.close();
    expect(spy).toHaveBeenCalledTimes(3);
    await expect.poll(() => records.length).toBe(3);
  });
});
