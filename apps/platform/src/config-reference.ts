// The configuration reference (docs/configuration.md), generated from the zod schema each
// deployable parses its environment with: names, types, allowed values, defaults and whether a
// variable is required come from the schema; what it means from the glossary beside this file.
import { fileURLToPath } from "node:url";
import { RuntimeEnvSchema } from "@agentplane/agent-runtime";
import { GatewayEnvSchema } from "@agentplane/api-gateway";
import { AuditEnvSchema } from "@agentplane/audit-svc";
import { RelayEnvSchema } from "@agentplane/cluster-relay";
import { ConnectionsEnvSchema } from "@agentplane/connections-svc";
import { GovernanceEnvSchema } from "@agentplane/governance-svc";
import { InferenceEnvSchema } from "@agentplane/inference-proxy";
import { EgressEnvSchema, SandboxEnvSchema } from "@agentplane/sandbox-svc";
import { TenancyEnvSchema } from "@agentplane/tenancy-svc";
import { z } from "zod";
import { AllInOneEnvSchema } from "./config.ts";
import { CONFIG_GLOSSARY } from "./config-glossary.ts";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

interface Deployable {
  name: string;
  /** How it is started. */
  start: string;
  schema: z.ZodType;
}

/** Every deployable, in the order the reference lists them. */
export const DEPLOYABLES: Deployable[] = [
  { name: "all-in-one", start: "`npm start` (`apps/platform`, `--target=all`)", schema: AllInOneEnvSchema },
  { name: "api-gateway", start: "`--target=gateway`", schema: GatewayEnvSchema },
  { name: "tenancy-svc", start: "`--target=tenancy`", schema: TenancyEnvSchema },
  { name: "sandbox-svc", start: "`--target=sandbox`", schema: SandboxEnvSchema },
  {
    name: "egress proxy",
    start: "`--target=egress`, with the kubernetes sandbox driver",
    schema: EgressEnvSchema,
  },
  { name: "governance-svc", start: "`--target=governance`", schema: GovernanceEnvSchema },
  { name: "connections-svc", start: "`--target=connections`", schema: ConnectionsEnvSchema },
  { name: "inference-proxy", start: "`--target=inference`", schema: InferenceEnvSchema },
  { name: "audit-svc", start: "`--target=audit`", schema: AuditEnvSchema },
  { name: "cluster-relay", start: "`--target=cluster-relay`, inside a customer's cluster", schema: RelayEnvSchema },
  { name: "agent-runtime", start: "`npm run runtime` (also started by `npm start`)", schema: RuntimeEnvSchema },
];

const VARIABLE = /^[A-Z][A-Z0-9_]*$/;

/** The variables of a deployable's schema, as JSON Schema properties (the input side of transforms). */
function variablesOf(deployable: Deployable): { properties: Record<string, JsonProperty>; required: Set<string> } {
  const json = z.toJSONSchema(deployable.schema, { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, JsonProperty>;
    required?: string[];
  };
  const properties = Object.fromEntries(Object.entries(json.properties ?? {}).filter(([name]) => VARIABLE.test(name)));
  return { properties, required: new Set(json.required ?? []) };
}

/** Every variable some deployable reads. */
export function allVariables(): Set<string> {
  return new Set(DEPLOYABLES.flatMap((d) => Object.keys(variablesOf(d).properties)));
}

/** Variables of any deployable that the glossary does not describe, as `deployable:VARIABLE`. */
export function undescribedVariables(): string[] {
  return DEPLOYABLES.flatMap((d) =>
    Object.keys(variablesOf(d).properties)
      .filter((name) => !meaningOf(d, name))
      .map((name) => `${d.name}:${name}`),
  );
}

const meaningOf = (d: Deployable, name: string): string | undefined =>
  CONFIG_GLOSSARY[`${d.name}:${name}`] ?? CONFIG_GLOSSARY[name];

interface JsonProperty {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonProperty[];
}

function typeOf(p: JsonProperty): string {
  if (p.enum) return p.enum.map((v) => `\`${String(v)}\``).join(", ");
  if (p.anyOf) return [...new Set(p.anyOf.map(typeOf))].join(" or ");
  if (p.format === "uri") return "URL";
  if (p.type === "integer") {
    const range =
      p.minimum !== undefined && p.maximum !== undefined && p.maximum < 1e9 ? ` ${p.minimum}–${p.maximum}` : "";
    return `integer${range}`;
  }
  return Array.isArray(p.type) ? p.type.join(" or ") : (p.type ?? "string");
}

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

function table(deployable: Deployable): string {
  const { properties, required } = variablesOf(deployable);
  const rows = Object.entries(properties)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, p]) => {
      const fallback = p.default === undefined ? "" : `\`${String(p.default)}\``;
      return `| \`${name}\` | ${cell(typeOf(p))} | ${required.has(name) ? "**required**" : fallback} | ${cell(meaningOf(deployable, name) ?? "")} |`;
    });
  return [
    `## ${deployable.name}`,
    "",
    `Started with ${deployable.start}.`,
    "",
    "| variable | type | default | meaning |",
    "|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

/** The whole reference, as docs/configuration.md holds it. */
export function renderConfigReference(): string {
  return [
    "# Configuration reference",
    "",
    "<!-- Generated by `npm run docs:config` from each deployable's configuration schema; do not edit.",
    "     A test fails when this file is stale. -->",
    "",
    "Every deployable reads environment variables through one zod schema and refuses to start with a",
    "one-line error naming each bad variable. Empty values count as unset. The embedded all-in-one",
    "reads every service's settings at once; in the distributed mode each process reads its own.",
    "",
    ...DEPLOYABLES.map(table),
  ].join("\n");
}

export const CONFIG_REFERENCE_PATH = `${REPO_ROOT}docs/configuration.md`;
