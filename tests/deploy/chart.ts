import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { CHART, helm } from "./helm.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const VALUES_DIR = join(here, "helm-values");
export const GOLDEN_DIR = join(here, "golden");

/** Each value set the chart is rendered with, by name (`helm-values/<name>.yaml`). */
export function valueSets(): string[] {
  return readdirSync(VALUES_DIR)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => basename(f, ".yaml"))
    .sort();
}

/** `helm template` of the chart as release `agentplane` in namespace `agentplane`. */
export function renderChart(valuesFile: string, extra: string[] = []): string {
  const result = helm(["template", "agentplane", CHART, "--namespace", "agentplane", "-f", valuesFile, ...extra]);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return result.stdout;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

export function parseObjects(rendered: string): K8sObject[] {
  return parseAllDocuments(rendered)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}
