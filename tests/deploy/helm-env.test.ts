import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../apps/agent-runtime/src/config.ts";
import { GatewayEnvSchema } from "../../apps/api-gateway/src/config.ts";
import { AuditEnvSchema } from "../../apps/audit-svc/src/config.ts";
import { ConnectionsEnvSchema } from "../../apps/connections-svc/src/config.ts";
import { GovernanceEnvSchema } from "../../apps/governance-svc/src/config.ts";
import { InferenceEnvSchema } from "../../apps/inference-proxy/src/config.ts";
import { SandboxEnvSchema } from "../../apps/sandbox-svc/src/config.ts";
import { EgressEnvSchema } from "../../apps/sandbox-svc/src/driver/kubernetes/egress-service.ts";
import { TenancyEnvSchema } from "../../apps/tenancy-svc/src/config.ts";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR, valueSets } from "./chart.ts";
import { CHART, helm } from "./helm.ts";

/** The schema each `--target=<name>` parses its environment with at start (a failure ends the Pod). */
const START_SCHEMAS: Record<string, { safeParse(env: unknown): { error?: { issues: unknown[] } } }> = {
  gateway: GatewayEnvSchema,
  tenancy: TenancyEnvSchema,
  sandbox: SandboxEnvSchema,
  egress: EgressEnvSchema,
  audit: AuditEnvSchema,
  governance: GovernanceEnvSchema,
  connections: ConnectionsEnvSchema,
  inference: InferenceEnvSchema,
};

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet: { path: string; port: string };
}
interface Container {
  args: string[];
  env: EnvVar[];
  livenessProbe: Probe;
  readinessProbe: Probe;
  startupProbe: Probe;
}

/** Plausible contents of the Secrets a variable is read from. */
const SECRET_VALUES: Record<string, string> = {
  DATABASE_URL: "postgres://agentplane@postgres:5432/agentplane",
  REDIS_URL: "redis://redis:6379",
  INTERNAL_IDENTITY_PRIVATE_KEY: '{"kty":"OKP"}',
  EGRESS_IDENTITY_PRIVATE_KEY: '{"kty":"OKP"}',
  EGRESS_IDENTITY_PUBLIC_KEY: '{"kty":"OKP"}',
  AGENTPLANE_SECRET_KEY: Buffer.alloc(32, 7).toString("base64"),
  SANDBOX_EGRESS_CREDENTIAL_KEY: Buffer.alloc(32, 9).toString("base64"),
};

/** What a Deployment's container sees: the chart's ConfigMap, then its own env (Secrets filled in). */
function containerEnv(list: K8sObject[], deployment: K8sObject): { container: Container; env: Record<string, string> } {
  const config = list.find((o) => o.kind === "ConfigMap" && o.metadata.name === "agentplane-config") as unknown as {
    data: Record<string, string>;
  };
  const container = (deployment.spec as { template: { spec: { containers: Container[] } } }).template.spec
    .containers[0] as Container;
  const env: Record<string, string> = { ...config.data };
  for (const v of container.env) {
    env[v.name] = v.value ?? SECRET_VALUES[v.name] ?? `secret:${v.valueFrom?.secretKeyRef?.name}`;
  }
  return { container, env };
}

const deploymentsOf = (name: string) => {
  const list = parseObjects(renderChart(join(VALUES_DIR, `${name}.yaml`)));
  return { list, deployments: list.filter((o) => o.kind === "Deployment") };
};

describe("the agentplane Helm chart's Pods as their processes read them", () => {
  it.each(valueSets())("gives every service an environment its start accepts (%s)", (name) => {
    const { list, deployments } = deploymentsOf(name);
    for (const deployment of deployments) {
      const component = deployment.metadata.labels?.["app.kubernetes.io/component"] as string;
      const schema = START_SCHEMAS[component];
      if (!schema) continue;
      const { container, env } = containerEnv(list, deployment);
      expect(container.args).toEqual([`--target=${component}`]);
      const parsed = schema.safeParse(env);
      expect(parsed.error?.issues ?? [], component).toEqual([]);
    }
  });

  it.each(Object.keys(START_SCHEMAS))(
    "either refuses services.%s.enabled=false or starts every other service",
    (off) => {
      const args = ["--set", `services.${off}.enabled=false`];
      const result = helm(["template", "agentplane", CHART, "-f", join(VALUES_DIR, "external.yaml"), ...args]);
      if (result.status !== 0) {
        // Refused, naming what needs the service.
        expect(result.stderr).toContain(`services.${off}.enabled=false`);
        return;
      }
      const list = parseObjects(result.stdout);
      for (const deployment of list.filter((o) => o.kind === "Deployment")) {
        const component = deployment.metadata.labels?.["app.kubernetes.io/component"] as string;
        const parsed = START_SCHEMAS[component]?.safeParse(containerEnv(list, deployment).env);
        expect(parsed?.error?.issues ?? [], component).toEqual([]);
      }
    },
  );

  it("gives the agent runtime its provider credential from the Secret it names, never in plain text", () => {
    const runtimeOf = (args: string[]) => {
      const list = parseObjects(renderChart(join(VALUES_DIR, "dev.yaml"), args));
      const runtime = list.find((o) => o.kind === "Deployment" && o.metadata.name === "agentplane-runtime");
      return containerEnv(list, runtime as K8sObject).container as unknown as {
        envFrom: { secretRef?: { name: string } }[];
      };
    };
    const named = runtimeOf(["--set", "services.runtime.existingSecret=agent-model"]);
    expect(named.envFrom.filter((e) => e.secretRef)).toEqual([{ secretRef: { name: "agent-model" } }]);
    expect(runtimeOf([]).envFrom.some((e) => e.secretRef)).toBe(false);
  });

  it("runs the agent runtime on its own SQLite database and probes it where it answers", () => {
    const { list, deployments } = deploymentsOf("dev");
    const runtime = deployments.find((d) => d.metadata.name === "agentplane-runtime") as K8sObject;
    const { container, env } = containerEnv(list, runtime);
    // The operator's provider credential (from services.runtime.existingSecret); the rest is the chart's.
    const config = loadConfig({ ...env, CLOUD_A_BEARER_TOKEN: "a-provider-token" });
    expect(config.host).toBe("0.0.0.0");
    expect(config.port).toBe(3003);
    // On its claim, which outlives the Pod (the root filesystem is read-only).
    const pod = (
      runtime.spec as { template: { spec: { volumes: { name: string; persistentVolumeClaim?: unknown }[] } } }
    ).template.spec;
    const mounts = (container as unknown as { volumeMounts: { name: string; mountPath: string }[] }).volumeMounts;
    const agentMount = mounts.find((m) => m.name === "agent");
    expect(agentMount?.mountPath).toBe(config.dataDir);
    expect(config.databasePath.startsWith(`${config.dataDir}/`)).toBe(true);
    expect(pod.volumes.find((v) => v.name === "agent")?.persistentVolumeClaim).toEqual({
      claimName: "agentplane-runtime",
    });
    const claim = list.find((o) => o.kind === "PersistentVolumeClaim" && o.metadata.name === "agentplane-runtime");
    expect(claim?.spec).toMatchObject({ accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "5Gi" } } });
    expect(runtime.spec).toMatchObject({ strategy: { type: "Recreate" } });
    // One agent: the shared autoscaling defaults leave it alone, and a second replica is refused.
    const scaled = parseObjects(
      renderChart(join(VALUES_DIR, "dev.yaml"), ["--set", "defaults.autoscaling.enabled=true"]),
    );
    const hpas = scaled.filter((o) => o.kind === "HorizontalPodAutoscaler").map((o) => o.metadata.name);
    expect(hpas).toContain("agentplane-tenancy");
    expect(hpas).not.toContain("agentplane-runtime");
    expect(scaled.find((o) => o.kind === "Deployment" && o.metadata.name === "agentplane-runtime")?.spec).toMatchObject(
      {
        replicas: 1,
      },
    );
    const two = helm([
      "template",
      "agentplane",
      CHART,
      "-f",
      join(VALUES_DIR, "dev.yaml"),
      "--set",
      "services.runtime.replicas=2",
    ]);
    expect(two.stderr).toContain("/services/runtime/replicas");
    const ephemeral = parseObjects(
      renderChart(join(VALUES_DIR, "dev.yaml"), ["--set", "services.runtime.persistence.size="]),
    );
    expect(ephemeral.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name)).not.toContain(
      "agentplane-runtime",
    );
    // It holds none of the platform's secrets.
    expect(container.env.filter((v) => v.valueFrom)).toEqual([]);
    // The runtime serves /health (apps/agent-runtime/src/app.ts), not the services' /health/live.
    for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
      expect(probe.httpGet).toEqual({ path: "/health", port: "http" });
    }
    // The gateway knows where the runtime's Service is, to front it at /agent.
    const gateway = deployments.find((d) => d.metadata.name === "agentplane-gateway") as K8sObject;
    const service = list.find((o) => o.kind === "Service" && o.metadata.name === "agentplane-runtime") as unknown as {
      spec: { ports: { port: number }[] };
    };
    const gatewayEnv = GatewayEnvSchema.parse({
      ...containerEnv(list, gateway).env,
      AGENT_RUNTIME_PROJECT_ID: "prj_agent",
    });
    expect(gatewayEnv.AGENT_RUNTIME_URL).toBe(`http://agentplane-runtime:${service.spec.ports[0]?.port}`);
    const external = deploymentsOf("external");
    const alone = external.deployments.find((d) => d.metadata.name === "agentplane-gateway") as K8sObject;
    expect(containerEnv(external.list, alone).env).not.toHaveProperty("AGENT_RUNTIME_URL");
  });
});
