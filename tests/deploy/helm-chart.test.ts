import { readFileSync } from "node:fs";
import { join } from "node:path";
import { restrictedViolations, validateKubeObject } from "@agentplane/testkit/kube";
import { HTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1";
import { describe, expect, it } from "vitest";
import { parseRelayEnv } from "../../apps/cluster-relay/src/config.ts";
import { configFromEnv } from "../../apps/sandbox-svc/src/config.ts";
import { GOLDEN_DIR, type K8sObject, parseObjects, renderChart, VALUES_DIR, valueSets } from "./chart.ts";
import { CHART, helm } from "./helm.ts";

const SERVICES = ["gateway", "tenancy", "sandbox", "egress", "audit", "governance", "connections", "inference"];

const rendered = Object.fromEntries(
  valueSets().map((name) => [name, renderChart(join(VALUES_DIR, `${name}.yaml`))]),
) as Record<string, string>;
const objects = (name: string) => parseObjects(rendered[name] as string);
const ofKind = (list: K8sObject[], kind: string) => list.filter((o) => o.kind === kind);
const named = (list: K8sObject[], kind: string, name: string) =>
  list.find((o) => o.kind === kind && o.metadata.name === name);

interface PodTemplate {
  metadata: { annotations?: Record<string, string> };
  spec: {
    automountServiceAccountToken?: boolean;
    containers: {
      livenessProbe?: { httpGet?: { path: string } };
      readinessProbe?: { httpGet?: { path: string } };
      startupProbe?: { httpGet?: { path: string } };
    }[];
  };
}
const podTemplate = (o: K8sObject) => (o.spec as { template: PodTemplate }).template;

describe("the agentplane Helm chart", () => {
  it.each(valueSets())("passes helm lint --strict with %s values", (name) => {
    const result = helm(["lint", "--strict", CHART, "-f", join(VALUES_DIR, `${name}.yaml`)]);
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it.each(valueSets())("renders %s as its golden file (rewrite: node tests/deploy/update-golden.ts)", (name) => {
    expect(rendered[name]).toBe(readFileSync(join(GOLDEN_DIR, `${name}.yaml`), "utf8"));
  });

  it.each(valueSets())("renders only objects valid against the Kubernetes schemas (%s)", (name) => {
    for (const object of objects(name)) {
      if (object.kind === "HTTPRoute") new HTTPRoute(object as never).validate();
      else expect(() => validateKubeObject(object), `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
  });

  it("gives every service liveness, readiness and startup probes and a config checksum", () => {
    const deployments = ofKind(objects("external"), "Deployment");
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(SERVICES.map((s) => `agentplane-${s}`).sort());
    for (const deployment of deployments) {
      const template = podTemplate(deployment);
      const container = template.spec.containers[0];
      expect(container?.livenessProbe?.httpGet?.path).toBe("/health/live");
      expect(container?.readinessProbe?.httpGet?.path).toBe("/health/ready");
      expect(container?.startupProbe?.httpGet?.path).toBe("/health/live");
      expect(template.metadata.annotations?.["checksum/config"]).toMatch(/^[0-9a-f]{64}$/);
      expect(restrictedViolations(template.spec as never), deployment.metadata.name).toEqual([]);
      // Only sandbox-svc holds an API token (the kubernetes driver).
      expect(template.spec.automountServiceAccountToken).toBe(deployment.metadata.name === "agentplane-sandbox");
    }
    // A configuration change rolls the Pods.
    const changed = parseObjects(renderChart(join(VALUES_DIR, "external.yaml"), ["--set", "config.logLevel=debug"]));
    const before = podTemplate(named(deployments, "Deployment", "agentplane-gateway") as K8sObject);
    const after = podTemplate(named(changed, "Deployment", "agentplane-gateway") as K8sObject);
    expect(after.metadata.annotations?.["checksum/config"]).not.toBe(before.metadata.annotations?.["checksum/config"]);
  });

  it("renders no Secret and no key generation when every secret is an existing one", () => {
    const list = objects("external");
    expect(ofKind(list, "Secret")).toEqual([]);
    expect(ofKind(list, "Job").map((j) => j.metadata.name)).toEqual(["agentplane-migrate"]);
    const env = (
      podTemplate(named(list, "Deployment", "agentplane-tenancy") as K8sObject).spec.containers[0] as {
        env: { name: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
      }
    ).env;
    expect(env.find((e) => e.name === "DATABASE_URL")?.valueFrom?.secretKeyRef).toEqual({
      name: "agentplane-postgres",
      key: "url",
    });
    expect(env.find((e) => e.name === "REDIS_URL")?.valueFrom?.secretKeyRef).toEqual({
      name: "agentplane-redis",
      key: "connection",
    });
    expect(env.find((e) => e.name === "INTERNAL_IDENTITY_PRIVATE_KEY")?.valueFrom?.secretKeyRef.name).toBe(
      "agentplane-keys",
    );
  });

  it("renders a PodDisruptionBudget only where more than one replica runs", () => {
    const external = ofKind(objects("external"), "PodDisruptionBudget").map((p) => p.metadata.name);
    expect(external).toContain("agentplane-tenancy");
    expect(external).not.toContain("agentplane-audit");
    const dev = objects("dev");
    // Replicas 1 by default there; the gateway autoscales from 2.
    expect(ofKind(dev, "PodDisruptionBudget").map((p) => p.metadata.name)).toEqual(["agentplane-gateway"]);
    expect(named(dev, "HorizontalPodAutoscaler", "agentplane-gateway")).toBeDefined();
    const gateway = named(dev, "Deployment", "agentplane-gateway") as K8sObject;
    expect(gateway.spec).not.toHaveProperty("replicas");
  });

  it("generates the keys once through an install hook, and runs dev stores only when asked", () => {
    const dev = objects("dev");
    const job = named(dev, "Job", "agentplane-keys");
    expect(job?.metadata.annotations).toMatchObject({ "helm.sh/hook": "pre-install,pre-upgrade" });
    expect(named(dev, "StatefulSet", "agentplane-postgres")).toBeDefined();
    expect(ofKind(objects("external"), "StatefulSet")).toEqual([]);
  });

  it("migrates every schema in a pre-install/pre-upgrade Job before the Pods start", () => {
    const job = named(objects("external"), "Job", "agentplane-migrate") as K8sObject;
    expect(job.metadata.annotations).toMatchObject({
      "helm.sh/hook": "pre-install,pre-upgrade",
      "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
    });
    // After the key generation hook (weight -5).
    expect(Number(job.metadata.annotations?.["helm.sh/hook-weight"])).toBeGreaterThan(-5);
    const template = podTemplate(job) as unknown as {
      spec: { restartPolicy: string; automountServiceAccountToken: boolean; containers: Record<string, unknown>[] };
    };
    expect(template.spec.restartPolicy).toBe("Never");
    expect(template.spec.automountServiceAccountToken).toBe(false);
    expect(restrictedViolations(template.spec as never)).toEqual([]);
    const container = template.spec.containers[0] as {
      image: string;
      args: string[];
      env: { name: string; valueFrom?: unknown }[];
    };
    // The same image as the services, run as `main.ts migrate` (apps/platform/test/migrate-job.test.ts).
    expect(container.image).toBe("ghcr.io/agentplane/agentplane:1.2.3");
    expect(container.args).toEqual(["migrate"]);
    expect(container.env).toEqual([
      { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "agentplane-postgres", key: "url" } } },
    ]);
    // The dev Postgres is part of the release and not up yet when pre-install hooks run.
    expect(named(objects("dev"), "Job", "agentplane-migrate")).toBeUndefined();
    const off = parseObjects(renderChart(join(VALUES_DIR, "external.yaml"), ["--set", "migrations.enabled=false"]));
    expect(named(off, "Job", "agentplane-migrate")).toBeUndefined();
  });

  it("creates the sandbox namespace under restricted Pod Security with the driver's Role", () => {
    const list = objects("dev");
    const namespace = named(list, "Namespace", "agentplane-sandboxes");
    expect(namespace?.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const role = named(list, "Role", "agentplane-sandbox-driver") as unknown as {
      rules: { resources: string[]; verbs: string[] }[];
    };
    const can = (resource: string, verb: string) =>
      role.rules.some((r) => r.resources.includes(resource) && r.verbs.includes(verb));
    for (const [resource, verb] of [
      ["pods", "watch"],
      ["pods", "create"],
      ["pods/exec", "create"],
      ["pods/exec", "get"],
      ["pods/portforward", "create"],
      ["persistentvolumeclaims", "delete"],
      ["networkpolicies", "create"],
      ["volumesnapshots", "create"],
      ["leases", "update"],
    ] as const) {
      expect(can(resource, verb), `${verb} ${resource}`).toBe(true);
    }
    expect(named(list, "NetworkPolicy", "default-deny")?.spec).toEqual({
      podSelector: {},
      policyTypes: ["Ingress", "Egress"],
    });
    const config = named(list, "ConfigMap", "agentplane-config") as unknown as { data: Record<string, string> };
    expect(config.data).toMatchObject({
      SANDBOX_DRIVER: "kubernetes",
      SANDBOX_K8S_RUNTIME_CLASS: "gvisor",
      SANDBOX_K8S_NODE_SELECTOR_JSON: '{"agentplane.dev/pool":"sandboxes"}',
    });
  });

  it("configures sandbox-svc with settings its own schema accepts, letting its Pods into sandboxes", () => {
    const list = objects("dev");
    const data = (named(list, "ConfigMap", "agentplane-config") as unknown as { data: Record<string, string> }).data;
    // AGENTPLANE_SECRET_KEY comes from the keys Secret (every service's env), not the ConfigMap.
    const config = configFromEnv({ ...data, AGENTPLANE_SECRET_KEY: "a-platform-secret-key-of-32-bytes" });
    expect(config.driver).toBe("kubernetes");
    const placement = config.kubernetes?.placement;
    expect(placement).toMatchObject({
      namespace: "agentplane-sandboxes",
      runtimeClassName: "gvisor",
      storageClassName: "fast",
      snapshotClassName: "csi-snapshots",
      tolerations: [{ key: "sandboxes", operator: "Exists", effect: "NoSchedule" }],
      imageRegistries: ["docker.io", "ghcr.io"],
      readOnlyRoot: true,
    });
    // Without a list, sandbox images may come from any registry; without readOnlyRootFilesystem the root stays writable.
    const external = objects("external").find((o) => o.kind === "ConfigMap") as unknown as {
      data: Record<string, string>;
    };
    expect(external.data.SANDBOX_K8S_IMAGE_REGISTRIES).toBeUndefined();
    expect(external.data.SANDBOX_K8S_READ_ONLY_ROOT).toBe("false");
    expect(
      configFromEnv({ ...external.data, AGENTPLANE_SECRET_KEY: "a-platform-secret-key-of-32-bytes" }).kubernetes
        ?.placement.readOnlyRoot,
    ).toBeUndefined();
    // The sandboxes' NetworkPolicy admits exactly the Pods of the sandbox Deployment.
    expect(placement?.platform?.namespace).toBe("agentplane");
    const podLabels = (
      podTemplate(named(list, "Deployment", "agentplane-sandbox") as K8sObject) as unknown as {
        metadata: { labels: Record<string, string> };
      }
    ).metadata.labels;
    expect(podLabels).toMatchObject(placement?.platform?.labels ?? { missing: "platform pods" });
  });

  it("runs the egress proxy sandboxes are confined to, and gives sandbox-svc its address and Pods", () => {
    const list = objects("dev");
    const data = (named(list, "ConfigMap", "agentplane-config") as unknown as { data: Record<string, string> }).data;
    const placement = configFromEnv({ ...data, SANDBOX_EGRESS_CREDENTIAL_KEY: Buffer.alloc(32, 1).toString("base64") })
      .kubernetes?.placement;
    const deployment = named(list, "Deployment", "agentplane-egress") as K8sObject;
    const template = podTemplate(deployment) as unknown as {
      metadata: { labels: Record<string, string> };
      spec: {
        automountServiceAccountToken: boolean;
        containers: { args: string[]; ports: { name: string; containerPort: number }[]; env: { name: string }[] }[];
      };
    };
    const container = template.spec.containers[0];
    expect(container?.args).toEqual(["--target=egress"]);
    expect(container?.ports).toContainEqual({ name: "proxy", containerPort: 3128 });
    // It verifies each sandbox's credential with the key sandbox-svc issues it with (helm-egress-key.test.ts).
    expect(container?.env.map((e) => e.name)).toContain("SANDBOX_EGRESS_CREDENTIAL_KEY");
    expect(template.spec.automountServiceAccountToken).toBe(false);
    // The sandboxes' NetworkPolicy peer is exactly these Pods, on the proxy port.
    expect(placement?.egressProxy).toEqual({
      namespace: "agentplane",
      labels: { "app.kubernetes.io/instance": "agentplane", "app.kubernetes.io/component": "egress" },
      port: 3128,
    });
    expect(template.metadata.labels).toMatchObject(placement?.egressProxy?.labels ?? { missing: "egress labels" });
    // Sandboxes dial its Service.
    const service = named(list, "Service", "agentplane-egress") as unknown as {
      metadata: { name: string };
      spec: { ports: { name: string; port: number }[] };
    };
    expect(service.spec.ports).toContainEqual(expect.objectContaining({ name: "proxy", port: 3128 }));
    expect(placement?.egressProxyUrl).toBe("http://agentplane-egress.agentplane.svc:3128");
    // sandbox-svc may see which VolumeSnapshotClasses exist (cluster-scoped), nothing more there.
    const classes = named(list, "ClusterRole", "agentplane-snapshot-classes") as unknown as { rules: unknown[] };
    expect(classes.rules).toEqual([
      { apiGroups: ["snapshot.storage.k8s.io"], resources: ["volumesnapshotclasses"], verbs: ["get", "list"] },
    ]);
    // sandbox-svc may write each sandbox's Secret.
    const role = named(list, "Role", "agentplane-sandbox-driver") as unknown as {
      rules: { resources: string[]; verbs: string[] }[];
    };
    for (const verb of ["create", "update", "delete"]) {
      expect(
        role.rules.some((r) => r.resources.includes("secrets") && r.verbs.includes(verb)),
        verb,
      ).toBe(true);
    }
  });

  it("admits only the gateway's Pods to the agent runtime's port, unless turned off", () => {
    const list = objects("dev");
    const labelsOf = (name: string) =>
      (
        podTemplate(named(list, "Deployment", name) as K8sObject) as unknown as {
          metadata: { labels: Record<string, string> };
        }
      ).metadata.labels;
    const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
      Object.entries(selector).every(([k, v]) => labels[k] === v);
    const policy = named(list, "NetworkPolicy", "agentplane-runtime") as unknown as {
      metadata: { namespace?: string };
      spec: {
        podSelector: { matchLabels: Record<string, string> };
        policyTypes: string[];
        ingress: { from: { podSelector: { matchLabels: Record<string, string> } }[]; ports: { port: number }[] }[];
      };
    };
    expect(policy).toBeDefined();
    // Ingress here; its egress: helm-runtime-egress.test.ts.
    expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    const deployments = ofKind(list, "Deployment").map((d) => d.metadata.name);
    // It applies to the runtime's Pods and no other.
    expect(deployments.filter((d) => matches(policy.spec.podSelector.matchLabels, labelsOf(d)))).toEqual([
      "agentplane-runtime",
    ]);
    // One rule: from the gateway's Pods (and no other Deployment's), to the port the runtime listens on.
    expect(policy.spec.ingress).toHaveLength(1);
    const [rule] = policy.spec.ingress;
    expect(rule?.from).toHaveLength(1);
    const from = rule?.from[0]?.podSelector.matchLabels ?? {};
    expect(deployments.filter((d) => matches(from, labelsOf(d)))).toEqual(["agentplane-gateway"]);
    const runtime = podTemplate(named(list, "Deployment", "agentplane-runtime") as K8sObject).spec
      .containers[0] as unknown as { ports: { containerPort: number }[] };
    expect(rule?.ports).toEqual([{ protocol: "TCP", port: runtime.ports[0]?.containerPort }]);

    const off = parseObjects(
      renderChart(join(VALUES_DIR, "dev.yaml"), ["--set", "services.runtime.networkPolicy.enabled=false"]),
    );
    expect(named(off, "NetworkPolicy", "agentplane-runtime")).toBeUndefined();
    // No runtime, no policy.
    expect(named(objects("external"), "NetworkPolicy", "agentplane-runtime")).toBeUndefined();
  });

  it("runs the cluster relay as an optional component with the settings the relay accepts", () => {
    expect(named(objects("external"), "Deployment", "agentplane-cluster-relay")).toBeUndefined();
    const relay = named(objects("dev"), "Deployment", "agentplane-cluster-relay") as K8sObject;
    // The tunnel token rotates on use: never two relays at once, not even during a rollout.
    expect(relay.spec).toMatchObject({ replicas: 1, strategy: { type: "Recreate" } });
    const container = podTemplate(relay).spec.containers[0] as unknown as { env: { name: string; value: string }[] };
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value]));
    expect(parseRelayEnv(env)).toMatchObject({
      CLUSTER_ID: "cl_self",
      TUNNEL_TOKEN_SECRET: "agentplane/agentplane-tunnel",
    });
    // A Service address inside this cluster is plain http: the relay takes it only when told to.
    const inCluster = (extra: string[]) => {
      const list = parseObjects(
        renderChart(join(VALUES_DIR, "dev.yaml"), [
          "--set",
          "clusterRelay.agentplaneUrl=http://agentplane-gateway.agentplane.svc:8080",
          ...extra,
        ]),
      );
      const deployment = named(list, "Deployment", "agentplane-cluster-relay") as K8sObject;
      const c = podTemplate(deployment).spec.containers[0] as unknown as { env: { name: string; value: string }[] };
      return Object.fromEntries(c.env.map((e) => [e.name, e.value]));
    };
    expect(() => parseRelayEnv(inCluster([]))).toThrow(/AGENTPLANE_URL: plain http/);
    expect(parseRelayEnv(inCluster(["--set", "clusterRelay.insecureHttp=true"])).AGENTPLANE_INSECURE_HTTP).toBe(true);
  });

  it("keeps every Service name a DNS label under the longest release name helm allows", () => {
    // helm refuses release names over 53 characters.
    const release = "payments-eu-west-1-production-primary-control-plane";
    expect(release.length).toBeLessThanOrEqual(53);
    const result = helm(["template", release, CHART, "-f", join(VALUES_DIR, "dev.yaml")]);
    expect(result.stderr).toBe("");
    const services = ofKind(parseObjects(result.stdout), "Service").map((s) => s.metadata.name);
    expect(services.some((name) => name.endsWith("-connections"))).toBe(true);
    for (const name of services) expect(name, name).toMatch(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
  });

  it("pulls the platform's image with the pull secrets and policy wherever it runs", () => {
    const list = parseObjects(
      renderChart(join(VALUES_DIR, "dev.yaml"), [
        "--set",
        "imagePullSecrets[0].name=registry",
        "--set",
        "image.pullPolicy=Always",
      ]),
    );
    const templates = list.flatMap((o) => {
      const spec = (o.spec as { template?: { spec: Record<string, unknown> } } | undefined)?.template?.spec;
      return spec ? [{ name: `${o.kind} ${o.metadata.name}`, spec }] : [];
    });
    const platform = templates.filter(({ spec }) =>
      (spec.containers as { image: string }[]).some((c) => c.image.startsWith("ghcr.io/agentplane/agentplane:")),
    );
    // Every Deployment of a service, the keys Job and the cluster relay.
    expect(platform.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        "Job agentplane-keys",
        "Deployment agentplane-cluster-relay",
        "Deployment agentplane-gateway",
      ]),
    );
    for (const { name, spec } of platform) {
      expect(spec.imagePullSecrets, name).toEqual([{ name: "registry" }]);
      for (const c of spec.containers as { imagePullPolicy?: string }[]) expect(c.imagePullPolicy, name).toBe("Always");
    }
  });

  it.each([
    ["no Postgres secret and no dev database", ["--set", "postgres.existingSecret="], "/postgres/existingSecret"],
    ["negative replicas", ["--set", "services.gateway.replicas=-1"], "/services/gateway/replicas"],
    ["an unknown setting", ["--set", "services.gateway.replica=2"], "replica"],
    ["an unknown sandbox driver", ["--set", "sandboxes.driver=docker"], "/sandboxes/driver"],
    // The image has no bubblewrap and the Pods may not make namespaces: sandboxes could not start.
    ["the local sandbox driver", ["--set", "sandboxes.driver=local"], "/sandboxes/driver"],
    [
      "an unknown runtime NetworkPolicy setting",
      ["--set", "services.runtime.networkPolicy.allowAll=true"],
      "/services/runtime/networkPolicy",
    ],
    ["an HTTPRoute without a parent", ["--set", "httpRoute.enabled=true"], "/httpRoute/parentRefs"],
    ["a relay without its cluster", ["--set", "clusterRelay.enabled=true"], "/clusterRelay"],
  ])("refuses %s through values.schema.json", (_name, args, pointer) => {
    const result = helm(["template", "agentplane", CHART, "-f", join(VALUES_DIR, "external.yaml"), ...args]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(pointer);
  });
});
