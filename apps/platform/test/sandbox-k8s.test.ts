// Kubernetes clients against the `/k8s` surface: a kubeconfig whose server is `<base>/k8s` and
// whose token is an API token reaches sandboxes as pods, with the clients' own WebSocket exec.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { PassThrough } from "node:stream";
import { CoreV1Api, Exec, KubeConfig, type V1Status } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSandbox,
  requireBwrap,
  type SandboxBody,
  type SandboxPlatform,
  startSandboxPlatform,
} from "./sandbox-harness.ts";

const bwrap = requireBwrap();
// Debian's python3-kubernetes, for the system Python (another python3 may come first on PATH).
const SYSTEM_PYTHON = "/usr/bin/python3";

function pythonKubernetes(): { available: boolean; reason: string } {
  const ok = existsSync(SYSTEM_PYTHON) && spawnSync(SYSTEM_PYTHON, ["-c", "import kubernetes"]).status === 0;
  if (!ok && process.env.CI === "true")
    throw new Error("python3-kubernetes is required in CI (apt-get install python3-kubernetes)");
  return { available: ok, reason: ok ? "" : " (skipped: python3-kubernetes not installed)" };
}

function kubeConfig(server: string, token: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "agentplane", server, skipTLSVerify: true }],
    users: [{ name: "agent", token }],
    contexts: [{ name: "agentplane", cluster: "agentplane", user: "agent" }],
    currentContext: "agentplane",
  });
  return kc;
}

describe.skipIf(!bwrap.available)(`Kubernetes clients against /k8s${bwrap.reason}`, () => {
  let h: SandboxPlatform;
  let sbx: SandboxBody;
  let kc: KubeConfig;

  beforeAll(async () => {
    h = await startSandboxPlatform();
    sbx = await createSandbox(h, { name: "k8s" });
    kc = kubeConfig(`${h.url}/k8s`, h.adminToken);
  }, 120_000);
  afterAll(() => h?.close());

  it("lists and reads sandboxes as pods of the project's namespace", async () => {
    const api = kc.makeApiClient(CoreV1Api);
    const list = await api.listNamespacedPod({ namespace: h.projectId });
    const pod = list.items.find((p) => p.metadata?.name === sbx.id);
    expect(pod?.status?.phase).toBe("Running");
    expect(pod?.spec?.containers[0]?.name).toBe("sandbox");
    const one = await api.readNamespacedPod({ name: sbx.id, namespace: h.projectId });
    expect(one.metadata?.namespace).toBe(h.projectId);
  });

  it("execs with @kubernetes/client-node: stdout, stderr and the exit status", async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    stdout.on("data", (c: Buffer) => out.push(c));
    stderr.on("data", (c: Buffer) => err.push(c));
    const status = await new Promise<V1Status>((resolve, reject) => {
      new Exec(kc)
        .exec(
          h.projectId,
          sbx.id,
          "sandbox",
          ["sh", "-c", "echo from-k8s; echo oops >&2; exit 3"],
          stdout,
          stderr,
          null,
          false,
          resolve,
        )
        .catch(reject);
    });
    expect(status.status).toBe("Failure");
    expect(status.details?.causes?.[0]?.message).toBe("3");
    await expect.poll(() => Buffer.concat(out).toString()).toBe("from-k8s\n");
    expect(Buffer.concat(err).toString()).toBe("oops\n");
  });

  it("refuses another organization's namespace (404) and a viewer's exec (403)", async () => {
    const api = kc.makeApiClient(CoreV1Api);
    await expect(api.listNamespacedPod({ namespace: h.otherProjectId })).rejects.toMatchObject({ code: 404 });
    const viewer = kubeConfig(`${h.url}/k8s`, h.viewerToken);
    const refused = await new Promise<unknown>((resolve) => {
      new Exec(viewer).exec(h.projectId, sbx.id, "sandbox", ["true"], null, null, null, false, resolve).then(
        (ws) => ws.on("close", () => resolve("closed")),
        (e: unknown) => resolve(e),
      );
    });
    expect(String((refused as Error)?.message ?? refused)).toMatch(/403/);
  });

  const py = pythonKubernetes();
  it.skipIf(!py.available)(`execs with the Python client's stream${py.reason}`, async () => {
    const script = `
import sys
from kubernetes import client
from kubernetes.stream import stream
cfg = client.Configuration()
cfg.host = sys.argv[1]
cfg.api_key = {"authorization": sys.argv[2]}
cfg.api_key_prefix = {"authorization": "Bearer"}
api = client.CoreV1Api(client.ApiClient(cfg))
out = stream(api.connect_get_namespaced_pod_exec, sys.argv[4], sys.argv[3],
             command=["sh", "-c", "echo from-python; uname -n"], stderr=True, stdin=False, stdout=True, tty=False)
print("OUT:" + out.replace("\\n", "|"))
`;
    const child = spawn(SYSTEM_PYTHON, ["-c", script, `${h.url}/k8s`, h.adminToken, h.projectId, sbx.id]);
    let text = "";
    child.stdout.on("data", (c: Buffer) => {
      text += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      text += c.toString();
    });
    const code = await new Promise((r) => child.once("exit", r));
    expect(text).toContain(`OUT:from-python|${sbx.slug}|`);
    expect(code).toBe(0);
  });
});
