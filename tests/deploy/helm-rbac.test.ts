import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GC_LEASE, REQUIRED_ACCESS } from "../../apps/sandbox-svc/src/driver/kubernetes/kubernetes-driver.ts";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR } from "./chart.ts";
import { CHART, helm } from "./helm.ts";

// The driver's Role may exec into every sandbox and read every sandbox's Secret (its platform token):
// only sandbox-svc's Pods may hold it, never an identity the other services (or, with
// serviceAccount.create=false, the namespace's other workloads) run as.

interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
}
interface Binding {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}

/** Every Pod template of the release, by `<kind>/<name>`. */
function podSpecs(list: K8sObject[]): Map<string, PodSpec> {
  const out = new Map<string, PodSpec>();
  for (const o of list) {
    const spec = o.spec as { template?: { spec: PodSpec }; jobTemplate?: { spec: { template: { spec: PodSpec } } } };
    const pod = spec?.template?.spec ?? spec?.jobTemplate?.spec.template.spec;
    if (pod) out.set(`${o.kind}/${o.metadata.name}`, pod);
  }
  return out;
}

const driverBindings = (list: K8sObject[]) =>
  list.filter(
    (o) =>
      (o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding") &&
      /-(sandbox-driver|snapshot-classes)$/.test((o as unknown as Binding).roleRef.name),
  ) as unknown as (K8sObject & Binding)[];

describe("the sandbox driver's permissions in the agentplane chart", () => {
  it.each([
    ["external", []],
    ["dev", []],
    ["external", ["--set", "services.runtime.enabled=true"]],
  ] as const)("are bound to a ServiceAccount only sandbox-svc runs as (%s %s)", (name, extra) => {
    const list = parseObjects(renderChart(join(VALUES_DIR, `${name}.yaml`), [...extra]));
    const bindings = driverBindings(list);
    expect(bindings.map((b) => b.kind).sort()).toEqual(["ClusterRoleBinding", "RoleBinding"]);
    const subjects = new Set(bindings.flatMap((b) => b.subjects.map((s) => `${s.namespace}/${s.name}`)));
    expect(subjects.size).toBe(1);
    const [subject] = [...subjects] as [string];
    const [namespace, account] = subject.split("/") as [string, string];
    expect(namespace).toBe("agentplane");
    // The release creates that account itself, with no token unless a Pod asks for one.
    const created = list.find((o) => o.kind === "ServiceAccount" && o.metadata.name === account) as
      | (K8sObject & { automountServiceAccountToken?: boolean })
      | undefined;
    expect(created?.automountServiceAccountToken).toBe(false);
    const holders = [...podSpecs(list)].filter(([, pod]) => (pod.serviceAccountName ?? "default") === account);
    expect(holders.map(([id]) => id)).toEqual(["Deployment/agentplane-sandbox"]);
    // Every other Pod of the release runs without an API token.
    for (const [id, pod] of podSpecs(list)) {
      if (id === "Deployment/agentplane-sandbox" || id.includes("keys") || id.includes("cluster-relay")) continue;
      expect(pod.automountServiceAccountToken, id).toBe(false);
    }
  });

  it("let the driver read and renew only its own leader Lease", () => {
    const list = parseObjects(renderChart(join(VALUES_DIR, "external.yaml")));
    const role = list.find((o) => o.kind === "Role" && o.metadata.name === "agentplane-sandbox-driver") as unknown as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
    };
    const leases = role.rules.filter((r) => r.resources.includes("leases"));
    // create cannot be limited by name (the object does not exist yet); reading and writing can.
    for (const rule of leases) {
      if (rule.verbs.some((v) => v !== "create")) expect(rule.resourceNames, rule.verbs.join()).toEqual([GC_LEASE]);
    }
    expect(leases.flatMap((r) => r.verbs).sort()).toEqual(["create", "get", "update"]);
  });

  it("grant every access the driver checks for at start, as the API server decides it", () => {
    const list = parseObjects(renderChart(join(VALUES_DIR, "external.yaml")));
    const role = list.find((o) => o.kind === "Role" && o.metadata.name === "agentplane-sandbox-driver") as unknown as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[];
    };
    // RBAC's rule match: group, resource (with its subresource), verb, and the object's name when
    // the rule names objects (a review without a name never matches such a rule).
    const allows = (access: (typeof REQUIRED_ACCESS)[number]) =>
      role.rules.some(
        (r) =>
          r.apiGroups.includes(access.group ?? "") &&
          r.resources.includes(access.subresource ? `${access.resource}/${access.subresource}` : access.resource) &&
          r.verbs.includes(access.verb) &&
          (!r.resourceNames || (access.name !== undefined && r.resourceNames.includes(access.name))),
      );
    expect(REQUIRED_ACCESS.filter((a) => !allows(a))).toEqual([]);
  });

  it("grant nothing the driver does not do", () => {
    const list = parseObjects(renderChart(join(VALUES_DIR, "external.yaml")));
    const role = list.find((o) => o.kind === "Role" && o.metadata.name === "agentplane-sandbox-driver") as unknown as {
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    };
    const required = new Set(
      REQUIRED_ACCESS.map(
        (a) => `${a.group ?? ""}/${a.subresource ? `${a.resource}/${a.subresource}` : a.resource}:${a.verb}`,
      ),
    );
    // Besides what it checks for at start: workspace snapshots where the cluster has them, and the
    // GET an exec or port-forward WebSocket opens with (authorized as `get` by older API servers).
    const optional = [
      ...["get", "list", "create", "delete"].map((verb) => `snapshot.storage.k8s.io/volumesnapshots:${verb}`),
      "/pods/exec:get",
      "/pods/portforward:get",
    ];
    const granted = role.rules.flatMap((r) =>
      r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))),
    );
    expect(granted.filter((g) => !required.has(g) && !optional.includes(g))).toEqual([]);
  });

  it("binds a ServiceAccount the operator names when the chart creates none", () => {
    const list = parseObjects(
      renderChart(join(VALUES_DIR, "external.yaml"), [
        "--set",
        "serviceAccount.create=false",
        "--set",
        "serviceAccount.sandboxDriverName=agentplane-driver",
      ]),
    );
    for (const binding of driverBindings(list)) {
      expect(binding.subjects).toEqual([
        { kind: "ServiceAccount", name: "agentplane-driver", namespace: "agentplane" },
      ]);
    }
    expect(podSpecs(list).get("Deployment/agentplane-sandbox")?.serviceAccountName).toBe("agentplane-driver");
    expect(podSpecs(list).get("Deployment/agentplane-gateway")?.serviceAccountName).toBe("default");
  });

  it.each([
    ["no account for the driver", ["--set", "serviceAccount.create=false"]],
    [
      "the account every service runs as",
      ["--set", "serviceAccount.create=false", "--set", "serviceAccount.sandboxDriverName=default"],
    ],
    ["the account every service runs as", ["--set", "serviceAccount.sandboxDriverName=agentplane"]],
  ])("refuses to bind the driver's permissions to %s", (_name, args) => {
    const result = helm(["template", "agentplane", CHART, "-f", join(VALUES_DIR, "external.yaml"), ...args]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("serviceAccount.sandboxDriverName");
  });
});

describe("the sandbox namespace of the agentplane chart", () => {
  // Sandboxes beside the platform would put its Pods under their default-deny policy, give the
  // driver's Role every Secret of the release (the platform's keys among them) and let tenants'
  // code run next to the stores.
  it.each([
    ["the release namespace", ["--namespace", "agentplane", "--set", "sandboxes.namespace=agentplane"]],
    [
      "the release namespace, not created",
      ["--namespace", "ops", "--set", "sandboxes.namespace=ops", "--set", "sandboxes.createNamespace=false"],
    ],
  ])("is never %s", (_name, args) => {
    const result = helm(["template", "agentplane", CHART, "-f", join(VALUES_DIR, "external.yaml"), ...args]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("sandboxes.namespace");
  });

  it("is its own namespace by default", () => {
    const list = parseObjects(renderChart(join(VALUES_DIR, "external.yaml")));
    const deny = list.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "default-deny");
    expect(deny?.metadata.namespace).toBe("agentplane-sandboxes");
  });
});

describe("the in-cluster relay's permissions in the agentplane chart", () => {
  // This cluster runs every tenant's sandboxes: cluster-wide, the relay's role (view: Pods, their
  // commands and logs) would hand them to whichever project this cluster is registered with.
  const bindings = (list: K8sObject[]) =>
    list.filter(
      (o) => /Binding$/.test(o.kind) && (o as unknown as Binding).subjects.some((s) => /cluster-relay$/.test(s.name)),
    ) as unknown as (K8sObject & Binding)[];

  it("binds its role in the namespaces it is given, never cluster-wide", () => {
    const list = parseObjects(
      renderChart(join(VALUES_DIR, "dev.yaml"), ["--set", "clusterRelay.namespaces={apps,batch}"]),
    );
    const granted = bindings(list).filter((b) => b.roleRef.name === "view");
    expect(granted.map((b) => `${b.kind} ${b.metadata.namespace}`).sort()).toEqual([
      "RoleBinding apps",
      "RoleBinding batch",
    ]);
    expect(granted.every((b) => b.roleRef.kind === "ClusterRole")).toBe(true);
    // At least one is named: the relay is never left to act nowhere, or everywhere.
    const none = helm([
      "template",
      "agentplane",
      CHART,
      "-f",
      join(VALUES_DIR, "dev.yaml"),
      "--set-json",
      "clusterRelay.namespaces=[]",
    ]);
    expect(none.status).not.toBe(0);
    expect(none.stderr).toContain("/clusterRelay/namespaces");
  });

  it.each(["agentplane-sandboxes", "agentplane"])("refuses to act in %s", (namespace) => {
    const result = helm([
      "template",
      "agentplane",
      CHART,
      "--namespace",
      "agentplane",
      "-f",
      join(VALUES_DIR, "dev.yaml"),
      "--set",
      `clusterRelay.namespaces={default,${namespace}}`,
    ]);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("clusterRelay.namespaces");
  });
});
