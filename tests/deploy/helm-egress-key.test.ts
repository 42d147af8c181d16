// The egress proxy is the one component that talks to the internet for sandboxes: its Pod gets the
// key of sandboxes' proxy credentials and never the platform's master key (decision 0052), and an
// identity key of its own, never the one every service accepts (decision 0062), and no database or
// bus credential at all: it asks sandbox-svc for what it needs of sandboxes (decision 0065).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR, valueSets } from "./chart.ts";

interface EnvVar {
  name: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
interface PodSpec {
  containers: { env?: EnvVar[]; envFrom?: { secretRef?: { name: string } }[] }[];
  volumes?: { secret?: { secretName: string } }[];
}

const podOf = (list: K8sObject[], name: string): PodSpec => {
  const deployment = list.find((o) => o.kind === "Deployment" && o.metadata.name === `agentplane-${name}`);
  if (!deployment) throw new Error(`no Deployment agentplane-${name}`);
  return (deployment.spec as { template: { spec: PodSpec } }).template.spec;
};

/** The keys a Pod reads from the platform's keys Secret (the stores' URLs come from Secrets of their own). */
const keyRefs = (pod: PodSpec, secret = "agentplane-keys") =>
  pod.containers
    .flatMap((c) => c.env ?? [])
    .flatMap((v) => (v.valueFrom?.secretKeyRef?.name === secret ? [v.valueFrom.secretKeyRef] : []));

describe("the egress proxy's keys in the agentplane Helm chart", () => {
  it.each(valueSets())("gives the egress proxy the credential key and not the master key (%s)", (set) => {
    const list = parseObjects(renderChart(join(VALUES_DIR, `${set}.yaml`)));
    const egress = podOf(list, "egress");
    expect(JSON.stringify(egress)).not.toContain("AGENTPLANE_SECRET_KEY");
    // Nor the whole keys Secret by another way in.
    for (const container of egress.containers) {
      expect(container.envFrom?.map((e) => e.secretRef?.name)).not.toContain("agentplane-keys");
    }
    expect(egress.volumes?.some((v) => v.secret)).toBeFalsy();
    expect(keyRefs(egress)).toEqual([
      { name: "agentplane-keys", key: "EGRESS_IDENTITY_PRIVATE_KEY" },
      { name: "agentplane-keys", key: "SANDBOX_EGRESS_CREDENTIAL_KEY" },
    ]);
    // The shared identity key would let it sign for any principal to any service.
    const variables = egress.containers.flatMap((c) => (c.env ?? []).map((v) => v.name));
    expect(variables).not.toContain("INTERNAL_IDENTITY_PRIVATE_KEY");
    expect(JSON.stringify(egress)).not.toContain("INTERNAL_IDENTITY_PRIVATE_KEY");
    // sandbox-svc issues the credentials with the same key (else derives it from the master key).
    expect(keyRefs(podOf(list, "sandbox"))).toContainEqual({
      name: "agentplane-keys",
      key: "SANDBOX_EGRESS_CREDENTIAL_KEY",
      optional: true,
    });
    // Governance and sandbox-svc alone accept its identities, on its own calls (they start without the key).
    for (const name of ["governance", "sandbox"]) {
      expect(keyRefs(podOf(list, name)), name).toContainEqual({
        name: "agentplane-keys",
        key: "EGRESS_IDENTITY_PUBLIC_KEY",
        optional: true,
      });
    }
    // Every other service keeps the master key and the shared identity key; none but these two
    // gets the credential key, none but the proxy its private identity key, none but governance
    // and sandbox-svc the public one.
    for (const name of ["gateway", "tenancy", "sandbox", "governance", "connections", "audit", "inference"]) {
      const refs = keyRefs(podOf(list, name)).map((r) => r.key);
      expect(refs, name).toContain("AGENTPLANE_SECRET_KEY");
      expect(refs, name).toContain("INTERNAL_IDENTITY_PRIVATE_KEY");
      expect(refs, name).not.toContain("EGRESS_IDENTITY_PRIVATE_KEY");
      if (name !== "sandbox") expect(refs, name).not.toContain("SANDBOX_EGRESS_CREDENTIAL_KEY");
      if (name !== "governance" && name !== "sandbox") expect(refs, name).not.toContain("EGRESS_IDENTITY_PUBLIC_KEY");
    }
  });

  it.each(valueSets())(
    "gives the egress proxy no database or bus credential, and sandbox-svc's address (%s)",
    (set) => {
      const list = parseObjects(renderChart(join(VALUES_DIR, `${set}.yaml`)));
      const egress = podOf(list, "egress");
      const variables = egress.containers.flatMap((c) => (c.env ?? []).map((v) => v.name));
      for (const name of ["DATABASE_URL", "REDIS_URL"]) expect(variables).not.toContain(name);
      // No Secret but the keys one reaches it (the stores' URLs live in Secrets of their own).
      const secrets = egress.containers.flatMap((c) =>
        (c.env ?? []).flatMap((v) => v.valueFrom?.secretKeyRef?.name ?? []),
      );
      expect(new Set(secrets)).toEqual(new Set(["agentplane-keys"]));
      const env = Object.fromEntries(
        egress.containers
          .flatMap((c) => (c.env ?? []) as { name: string; value?: string }[])
          .map((v) => [v.name, v.value]),
      );
      expect(env.SANDBOX_URL).toMatch(/^http:\/\/agentplane-sandbox:\d+$/);
      expect(env.GOVERNANCE_URL).toMatch(/^http:\/\/agentplane-governance:\d+$/);
      // The other services keep their stores.
      expect(podOf(list, "sandbox").containers[0]?.env?.map((v) => v.name)).toContain("DATABASE_URL");
    },
  );

  it("refuses an egress proxy without sandbox-svc, which it cannot decide without", () => {
    expect(() => renderChart(join(VALUES_DIR, "external.yaml"), ["--set", "services.sandbox.enabled=false"])).toThrow(
      /services.sandbox.enabled=false: egress cannot start without it \(SANDBOX_URL\)/,
    );
  });

  it("reads the credential key from keys.existingSecret when one is named", () => {
    const list = parseObjects(renderChart(join(VALUES_DIR, "external.yaml"), ["--set", "keys.existingSecret=my-keys"]));
    expect(keyRefs(podOf(list, "egress"), "my-keys")).toEqual([
      { name: "my-keys", key: "EGRESS_IDENTITY_PRIVATE_KEY" },
      { name: "my-keys", key: "SANDBOX_EGRESS_CREDENTIAL_KEY" },
    ]);
    expect(keyRefs(podOf(list, "governance"), "my-keys")).toContainEqual({
      name: "my-keys",
      key: "EGRESS_IDENTITY_PUBLIC_KEY",
      optional: true,
    });
    // No hook then: the operator's Secret is never written to.
    expect(list.some((o) => o.kind === "Job" && o.metadata.name.endsWith("-keys"))).toBe(false);
  });

  it("lets the key hook add the credential key to its own Secret only", () => {
    const list = parseObjects(renderChart(join(VALUES_DIR, "dev.yaml")));
    const role = list.find((o) => o.kind === "Role" && o.metadata.name === "agentplane-keys") as unknown as {
      rules: { resources: string[]; resourceNames?: string[]; verbs: string[] }[];
    };
    expect(role.rules).toEqual([
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      { apiGroups: [""], resources: ["secrets"], resourceNames: ["agentplane-keys"], verbs: ["get", "patch"] },
    ]);
  });

  it("leaves the credential key out of sandbox-svc without an egress proxy", () => {
    const list = parseObjects(
      renderChart(join(VALUES_DIR, "external.yaml"), ["--set", "services.egress.enabled=false"]),
    );
    expect(keyRefs(podOf(list, "sandbox")).map((r) => r.key)).not.toContain("SANDBOX_EGRESS_CREDENTIAL_KEY");
    expect(keyRefs(podOf(list, "governance")).map((r) => r.key)).not.toContain("EGRESS_IDENTITY_PUBLIC_KEY");
    expect(keyRefs(podOf(list, "sandbox")).map((r) => r.key)).not.toContain("EGRESS_IDENTITY_PUBLIC_KEY");
  });
});
