import { silentLogger } from "@agentplane/service-kit";
import { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { KubeConfig } from "@kubernetes/client-node";
import { kubernetesConfigFrom } from "../../src/driver/kubernetes/config.ts";
import { EgressCredentials } from "../../src/driver/kubernetes/egress-credential.ts";
import { KubernetesDriver } from "../../src/driver/kubernetes/kubernetes-driver.ts";
import type { ExecProcess, SandboxRuntimeSpec } from "../../src/driver/types.ts";

export const NS = "agentplane-sandboxes";

export async function startFakeKube(): Promise<FakeKubeApiServer> {
  return FakeKubeApiServer.start({ token: "sandbox-svc-token", namespaces: [NS] });
}

/** `SANDBOX_EGRESS_CREDENTIAL_KEY` of the tests: sandbox-svc's and the egress proxy's alike. */
export const EGRESS_KEY = Buffer.alloc(32, "egress-credential-key").toString("base64");

/**
 * A driver as a deployment builds it, against the fake API server; `egressProxyUrl` gives sandboxes
 * the proxy, `readOnlyRoot` is SANDBOX_K8S_READ_ONLY_ROOT.
 */
export function kubeDriver(
  fake: FakeKubeApiServer,
  options: { startTimeoutMs?: number; dialPodIP?: boolean; egressProxyUrl?: string; readOnlyRoot?: boolean } = {},
) {
  const kc = new KubeConfig();
  kc.loadFromString(fake.kubeconfig(NS));
  const config = kubernetesConfigFrom({
    SANDBOX_K8S_RUNTIME_CLASS: "gvisor",
    SANDBOX_K8S_NODE_SELECTOR_JSON: { "agentplane.dev/pool": "sandboxes" },
    SANDBOX_K8S_TOLERATIONS_JSON: [{ key: "sandboxes", operator: "Exists", effect: "NoSchedule" }],
    SANDBOX_K8S_EGRESS_PROXY: "agentplane/app.kubernetes.io/component=egress-proxy:3128",
    SANDBOX_K8S_PLATFORM_PODS: "agentplane/app.kubernetes.io/component=sandbox-svc",
    ...(options.egressProxyUrl
      ? { SANDBOX_K8S_EGRESS_PROXY_URL: options.egressProxyUrl, SANDBOX_EGRESS_CREDENTIAL_KEY: EGRESS_KEY }
      : {}),
    ...(options.readOnlyRoot !== undefined ? { SANDBOX_K8S_READ_ONLY_ROOT: options.readOnlyRoot } : {}),
  });
  return new KubernetesDriver({
    kubeConfig: kc,
    logger: silentLogger(),
    placement: config.placement,
    startTimeoutMs: options.startTimeoutMs ?? 10_000,
    dialPodIP: options.dialPodIP ?? false,
    ...(config.egressCredentialKey ? { egressCredentials: new EgressCredentials(config.egressCredentialKey) } : {}),
  });
}

let counter = 0;
export function runtimeSpec(overrides: Partial<SandboxRuntimeSpec> = {}): SandboxRuntimeSpec {
  counter++;
  return {
    id: `sbx_k8s${counter}${Date.now().toString(36)}`,
    slug: `box-${counter}-${Date.now().toString(36)}`,
    orgId: "org_k8s",
    projectId: "prj_k8s",
    image: "default",
    env: { GREETING: "hello" },
    resources: { cpuMillicores: 500, memoryMiB: 256 },
    ...overrides,
  };
}

/** Runs a command to its end: output and exit code. */
export async function collect(proc: ExecProcess, stdin?: string) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  proc.stdout.on("data", (c: Buffer) => out.push(c));
  proc.stderr.on("data", (c: Buffer) => err.push(c));
  if (stdin !== undefined) proc.stdin.end(stdin);
  const exit = await proc.exited;
  return { ...exit, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}
