import { PassThrough } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, makeInformer, type V1Pod, type V1Status } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FakeKubeApiServer } from "../src/kube/index.ts";

const NS = "sandboxes";

function pod(name: string, command: string[], labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: { name, labels },
    spec: { restartPolicy: "Never", containers: [{ name: "sandbox", image: "busybox", command }] },
  };
}

async function run(kc: KubeConfig, name: string, argv: string[], stdinText?: string, container = "sandbox") {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (c) => out.push(c));
  stderr.on("data", (c) => err.push(c));
  const stdin = stdinText === undefined ? null : new PassThrough();
  const status = new Promise<V1Status>((resolve) => {
    void new Exec(kc)
      .exec(NS, name, container, argv, stdout, stderr, stdin, false, resolve)
      .then(() => {
        stdin?.end(stdinText);
      })
      .catch((err: Error) => resolve({ status: "Failure", message: err.message } as V1Status));
  });
  const result = await status;
  return { status: result, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

describe("fake Kubernetes API server with @kubernetes/client-node", () => {
  let fake: FakeKubeApiServer;
  let kc: KubeConfig;
  let core: CoreV1Api;
  beforeAll(async () => {
    fake = await FakeKubeApiServer.start({ token: "t0ken", namespaces: [NS] });
    kc = new KubeConfig();
    kc.loadFromString(fake.kubeconfig(NS));
    core = kc.makeApiClient(CoreV1Api);
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("creates with resourceVersions, answers 409 for a duplicate and a stale update, 404 when gone", async () => {
    const created = await core.createNamespacedPod({ namespace: NS, body: pod("crud", ["sleep", "30"]) });
    expect(created.metadata?.uid).toBeTruthy();
    const duplicate = await core
      .createNamespacedPod({ namespace: NS, body: pod("crud", ["sleep", "30"]) })
      .catch((e) => e);
    expect(duplicate.code).toBe(409);
    expect(JSON.stringify(duplicate.body)).toContain("AlreadyExists");
    const fresh = await core.readNamespacedPod({ name: "crud", namespace: NS });
    fresh.metadata = { ...fresh.metadata, labels: { a: "b" } };
    await core.replaceNamespacedPod({ name: "crud", namespace: NS, body: fresh });
    const stale = await core.replaceNamespacedPod({ name: "crud", namespace: NS, body: fresh }).catch((e) => e);
    expect(stale.code).toBe(409);
    expect(JSON.stringify(stale.body)).toContain("the object has been modified");
    await core.deleteNamespacedPod({ name: "crud", namespace: NS });
    const gone = await core.readNamespacedPod({ name: "crud", namespace: NS }).catch((e) => e);
    expect(gone.code).toBe(404);
  });

  it("rejects a missing token and names the verb and resource of an RBAC denial", async () => {
    const anonymous = new KubeConfig();
    anonymous.loadFromClusterAndUser({ name: "fake", server: fake.url, skipTLSVerify: true }, { name: "anon" });
    const unauthorized = await anonymous
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: NS })
      .catch((e) => e);
    expect(unauthorized.code).toBe(401);
    fake.denials.push({ verb: "list", resource: "pods" });
    const denied = await core.listNamespacedPod({ namespace: NS }).catch((e) => e);
    fake.denials.length = 0;
    expect(denied.code).toBe(403);
    expect(JSON.parse(denied.body).message).toBe(
      `pods is forbidden: User "system:serviceaccount:agentplane:sandbox-svc" cannot list resource "pods" in API group "" in the namespace "${NS}"`,
    );
  });

  it("feeds an informer by watch (no polling), runs the Pod's command and reports its exit", async () => {
    const informer = makeInformer(
      kc,
      `/api/v1/namespaces/${NS}/pods`,
      () => core.listNamespacedPod({ namespace: NS, labelSelector: "app=watched" }),
      "app=watched",
    );
    const phases: string[] = [];
    informer.on("update", (p) => phases.push(`${p.metadata?.name}:${p.status?.phase}`));
    const listsBefore = fake.requests.filter((r) => r === `GET /api/v1/namespaces/${NS}/pods`).length;
    await informer.start();
    await core.createNamespacedPod({ namespace: NS, body: pod("ignored", ["sleep", "30"]) });
    await core.createNamespacedPod({
      namespace: NS,
      body: pod("short", ["sh", "-c", "sleep 0.2; exit 3"], { app: "watched" }),
    });
    await vi.waitFor(() => expect(phases).toContain("short:Failed"), { timeout: 5000 });
    expect(phases.some((p) => p.startsWith("ignored"))).toBe(false);
    const short = informer.get("short", NS);
    expect(short?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(3);
    const lists = fake.requests.filter((r) => r === `GET /api/v1/namespaces/${NS}/pods`).length;
    await informer.stop();
    expect(lists - listsBefore).toBe(1);
  });

  it("garbage-collects objects owned by a deleted one", async () => {
    const claim = await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: "ws" },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
      },
    });
    const owned = pod("owned", ["sleep", "30"]);
    owned.metadata = {
      ...owned.metadata,
      ownerReferences: [
        { apiVersion: "v1", kind: "PersistentVolumeClaim", name: "ws", uid: claim.metadata?.uid as string },
      ],
    };
    await core.createNamespacedPod({ namespace: NS, body: owned });
    await core.deleteNamespacedPersistentVolumeClaim({ name: "ws", namespace: NS });
    await vi.waitFor(async () => {
      const gone = await core.readNamespacedPod({ name: "owned", namespace: NS }).catch((e) => e);
      expect(gone.code).toBe(404);
    });
  });

  it("execs over v5 with exit codes and stdin close, and falls back to v4", async () => {
    await core.createNamespacedPod({ namespace: NS, body: pod("exec", ["sleep", "30"]) });
    await vi.waitFor(async () =>
      expect((await core.readNamespacedPod({ name: "exec", namespace: NS })).status?.phase).toBe("Running"),
    );
    const ok = await run(kc, "exec", ["sh", "-c", "echo out; echo err >&2"]);
    expect(ok).toMatchObject({ stdout: "out\n", stderr: "err\n", status: { status: "Success" } });
    const failed = await run(kc, "exec", ["sh", "-c", "exit 7"]);
    expect(failed.status.details?.causes?.[0]).toEqual({ reason: "ExitCode", message: "7" });
    const cat = await run(kc, "exec", ["sh", "-c", "wc -c; echo after-eof"], "12345");
    expect(cat.stdout).toBe("5\nafter-eof\n");
    fake.execProtocols = ["v4.channel.k8s.io"];
    const v4 = await run(kc, "exec", ["sh", "-c", "echo v4"]);
    fake.execProtocols = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
    expect(v4).toMatchObject({ stdout: "v4\n", status: { status: "Success" } });
  });

  it("keeps a Pod Pending with the scheduler's reason when it cannot be placed", async () => {
    fake.unschedulable = "0/3 nodes are available: 3 Insufficient memory.";
    await core.createNamespacedPod({ namespace: NS, body: pod("big", ["sleep", "30"]) });
    await vi.waitFor(async () => {
      const p = await core.readNamespacedPod({ name: "big", namespace: NS });
      expect(p.status?.conditions?.[0]).toMatchObject({ reason: "Unschedulable", status: "False" });
    });
    fake.unschedulable = undefined;
    fake.kubelet.reschedule();
    await vi.waitFor(async () =>
      expect((await core.readNamespacedPod({ name: "big", namespace: NS })).status?.phase).toBe("Running"),
    );
  });

  it("runs init containers first, each reachable by exec, and fails the Pod with a failed one's log", async () => {
    const body = pod("init", ["sh", "-c", "cat seen > seen-by-main; sleep 30"]);
    const data = [{ name: "data", mountPath: "/data" }];
    body.spec = {
      ...body.spec,
      containers: (body.spec?.containers ?? []).map((c) => ({ ...c, workingDir: "/data", volumeMounts: data })),
      initContainers: [
        {
          name: "setup",
          image: "busybox",
          command: ["sh", "-c", 'until [ -e ready ]; do sleep 0.05; done; echo "$POD_UID" > seen'],
          env: [{ name: "POD_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } }],
          workingDir: "/data",
          volumeMounts: data,
        },
      ],
      volumes: [{ name: "data", emptyDir: {} }],
    };
    const created = await core.createNamespacedPod({ namespace: NS, body });
    await vi.waitFor(async () => {
      const p = await core.readNamespacedPod({ name: "init", namespace: NS });
      expect(p.status?.initContainerStatuses?.[0]?.state?.running).toBeDefined();
    });
    const p = await core.readNamespacedPod({ name: "init", namespace: NS });
    expect(p.status).toMatchObject({
      phase: "Pending",
      containerStatuses: [{ name: "sandbox", state: { waiting: { reason: "PodInitializing" } } }],
    });
    expect(p.status?.conditions?.find((c) => c.type === "Initialized")?.status).toBe("False");
    // The main container does not run yet; the init container does, and takes an exec.
    const early = (await run(kc, "init", ["true"])).status;
    expect(early).toMatchObject({ status: "Failure", message: expect.stringContaining("400") });
    expect((await run(kc, "init", ["sh", "-c", "touch ready"], undefined, "setup")).status.status).toBe("Success");
    await vi.waitFor(async () =>
      expect((await core.readNamespacedPod({ name: "init", namespace: NS })).status?.phase).toBe("Running"),
    );
    expect((await run(kc, "init", ["cat", "seen-by-main"])).stdout).toBe(`${created.metadata?.uid}\n`);
    const running = await core.readNamespacedPod({ name: "init", namespace: NS });
    expect(running.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0 });

    const broken = pod("init-fails", ["sleep", "30"]);
    broken.spec = {
      ...broken.spec,
      containers: broken.spec?.containers ?? [],
      initContainers: [
        {
          name: "setup",
          image: "busybox",
          command: ["sh", "-c", "echo no archive >&2; exit 4"],
          terminationMessagePolicy: "FallbackToLogsOnError",
        },
      ],
    };
    await core.createNamespacedPod({ namespace: NS, body: broken });
    await vi.waitFor(async () =>
      expect((await core.readNamespacedPod({ name: "init-fails", namespace: NS })).status?.phase).toBe("Failed"),
    );
    const failed = await core.readNamespacedPod({ name: "init-fails", namespace: NS });
    expect(failed.status?.initContainerStatuses?.[0]?.state?.terminated).toMatchObject({
      exitCode: 4,
      message: "no archive",
    });
    expect(failed.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe("PodInitializing");
  });
});
