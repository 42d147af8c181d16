// With sandboxes.createNamespace=false the chart does not label the sandbox namespace: the
// install's notes tell the operator which Pod Security labels to set, the very ones the chart
// gives the namespace it creates.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseObjects, renderChart, VALUES_DIR } from "./chart.ts";
import { CHART, helm } from "./helm.ts";

const VALUES = join(VALUES_DIR, "external.yaml");

/** The notes `helm install` prints (a client-side dry run: no cluster, so `lookup` finds nothing). */
function notes(extra: string[]): string {
  const result = helm(["install", "agentplane", CHART, "-n", "agentplane", "-f", VALUES, "--dry-run=client", ...extra]);
  if (result.status !== 0) throw new Error(`helm install --dry-run failed: ${result.stderr}`);
  const at = result.stdout.indexOf("\nNOTES:\n");
  return at < 0 ? "" : result.stdout.slice(at + "\nNOTES:\n".length);
}

describe("the sandbox namespace's Pod Security labels in the agentplane Helm chart", () => {
  const created = parseObjects(renderChart(VALUES)).find((o) => o.kind === "Namespace");
  const podSecurity = Object.entries(created?.metadata.labels ?? {}).filter(([k]) =>
    k.startsWith("pod-security.kubernetes.io/"),
  );

  it("labels the namespace it creates restricted, and says nothing more", () => {
    expect(Object.fromEntries(podSecurity)).toMatchObject({ "pod-security.kubernetes.io/enforce": "restricted" });
    expect(notes([])).not.toContain("pod-security");
  });

  it("names every label to set on a namespace it does not create", () => {
    const text = notes(["--set", "sandboxes.createNamespace=false"]);
    expect(text).toContain("sandboxes.createNamespace=false");
    expect(text).toContain("kubectl label namespace agentplane-sandboxes --overwrite");
    expect(podSecurity.length).toBeGreaterThanOrEqual(4);
    for (const [key, value] of podSecurity) expect(text).toContain(`${key}=${value}`);
    // Nor does the release create it.
    const rendered = parseObjects(renderChart(VALUES, ["--set", "sandboxes.createNamespace=false"]));
    expect(rendered.some((o) => o.kind === "Namespace")).toBe(false);
  });
});
