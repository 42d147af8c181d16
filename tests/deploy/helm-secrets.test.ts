// Secret settings never go into the release as plain text: every service takes a Secret of its
// own (existingSecret, each key a variable), and a secret given in an extraEnv is refused at render.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type K8sObject, parseObjects, renderChart, VALUES_DIR } from "./chart.ts";

const VALUES = join(VALUES_DIR, "external.yaml");

interface Container {
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
}
const container = (o: K8sObject) =>
  (o.spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0] as Container;

describe("secret settings in the agentplane Helm chart", () => {
  it("gives a service the variables of the Secret its existingSecret names, and no other service", () => {
    const objects = parseObjects(renderChart(VALUES, ["--set", "services.inference.existingSecret=provider-keys"]));
    const deployment = (name: string) =>
      objects.find((o) => o.kind === "Deployment" && o.metadata.name === `agentplane-${name}`) as K8sObject;
    expect(container(deployment("inference")).envFrom).toContainEqual({ secretRef: { name: "provider-keys" } });
    for (const other of ["gateway", "tenancy", "connections"]) {
      expect(
        container(deployment(other)).envFrom?.some((e) => e.secretRef),
        other,
      ).toBe(false);
    }
  });

  it.each([
    "services.inference.extraEnv.CLOUD_A_BEARER_TOKEN",
    "services.tenancy.extraEnv.OIDC_CLIENT_SECRET",
    "defaults.extraEnv.CLOUD_B_API_KEY",
    "config.extraEnv.AGENTPLANE_BOOTSTRAP_TOKEN",
    "config.extraEnv.DATABASE_URL",
    // The master key being rotated out opens everything sealed before the rotation.
    "config.extraEnv.AGENTPLANE_SECRET_KEY_PREVIOUS",
    "services.governance.extraEnv.AGENTPLANE_SECRET_KEY_PREVIOUS",
    // Every sandbox's egress proxy credential is an HMAC under it.
    "services.egress.extraEnv.SANDBOX_EGRESS_CREDENTIAL_KEY",
    "config.extraEnv.SANDBOX_EGRESS_CREDENTIAL_KEY",
  ])("refuses %s: extraEnv is plain text in the release", (path) => {
    const value = "sk-in-plain-text";
    expect(() => renderChart(VALUES, ["--set", `${path}=${value}`])).toThrow(
      new RegExp(`${path.replaceAll(".", "\\.")} is a secret: .*existingSecret`),
    );
  });

  it("keeps settings that are no secret in extraEnv", () => {
    const rendered = renderChart(VALUES, [
      "--set",
      "services.gateway.extraEnv.TRUSTED_PROXIES=10.0.0.0/8",
      "--set",
      "config.extraEnv.CONTEXT_WINDOW_TOKENS=x",
    ]);
    expect(rendered).toContain("TRUSTED_PROXIES");
  });
});
