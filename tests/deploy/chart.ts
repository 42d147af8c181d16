import { readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { CHART, helm, RELAY_CHART } from "./helm.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const VALUES_DIR = join(here, "helm-values");
export const GOLDEN_DIR = join(here, "golden");
/** The cluster relay's own chart (deploy/helm/agentplane-relay): its value sets and golden files. */
export const RELAY_VALUES_DIR = join(here, "relay-values");
export const RELAY_GOLDEN_DIR = join(here, "golden/relay-chart");

/** Each value set a chart is rendered with, by name (`<dir>/<name>.yaml`). */
export function valueSets(dir = VALUES_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml"))
    .map((f) => basename(f, ".yaml"))
    .sort();
}

/** `helm template` of the chart as release `agentplane` in namespace `agentplane`. */
export function renderChart(valuesFile: string, extra: string[] = [], chart = CHART): string {
  const result = helm(["template", "agentplane", chart, "--namespace", "agentplane", "-f", valuesFile, ...extra]);
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

/** `helm template` of the cluster relay's chart as release `relay` in namespace `agentplane-relay`. */
export function renderRelayChart(valuesFile: string, extra: string[] = []): string {
  const result = helm([
    "template",
    "relay",
    RELAY_CHART,
    "--namespace",
    "agentplane-relay",
    "-f",
    valuesFile,
    ...extra,
  ]);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return result.stdout;
}
