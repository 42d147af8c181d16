import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { CoordinationV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaderLease } from "../../src/driver/kubernetes/lease.ts";
import { NS, startFakeKube } from "./fixture.ts";

describe("leader lease (coordination.k8s.io) against the fake API server", () => {
  let fake: FakeKubeApiServer;
  let api: CoordinationV1Api;
  beforeAll(async () => {
    fake = await startFakeKube();
    const kc = new KubeConfig();
    kc.loadFromString(fake.kubeconfig(NS));
    api = kc.makeApiClient(CoordinationV1Api);
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("is held by one replica until it stops renewing, then taken over", async () => {
    const a = new LeaderLease(api, { namespace: NS, name: "test-lease", durationSeconds: 1, identity: "a" });
    const b = new LeaderLease(api, { namespace: NS, name: "test-lease", durationSeconds: 1, identity: "b" });
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    expect(await a.tryAcquire()).toBe(true);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await b.tryAcquire()).toBe(true);
    expect(await a.tryAcquire()).toBe(false);
    const lease = fake.store.get("coordination.k8s.io/leases", NS, "test-lease");
    expect(lease?.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
  });

  it("loses a race for an expired lease to the replica that wrote first (409)", async () => {
    const a = new LeaderLease(api, { namespace: NS, name: "race", durationSeconds: 1, identity: "a" });
    expect(await a.tryAcquire()).toBe(true);
    await new Promise((r) => setTimeout(r, 1200));
    const contenders = [1, 2, 3].map(
      (i) => new LeaderLease(api, { namespace: NS, name: "race", durationSeconds: 1, identity: `c${i}` }),
    );
    const won = await Promise.all(contenders.map((c) => c.tryAcquire()));
    expect(won.filter(Boolean)).toHaveLength(1);
  });
});
