import { zodIssuesToFieldErrors } from "@agentplane/problem-details";
import { describe, expect, it } from "vitest";
import { CreateAwsConnectionBody, UpdateClusterBody } from "../src/connections/index.ts";
import { CreatePolicyBody } from "../src/governance/policies.ts";
import { CreateSandboxRequest, UpdateSandboxRequest } from "../src/sandbox/schemas.ts";
import { CreateProjectBody, UpdateProjectBody } from "../src/tenancy/projects.ts";

type Schema = { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: unknown[] } } };

/** Parses a body as the services receive it: JSON text, where `__proto__` is an own key. */
function parse(schema: Schema, json: string) {
  const result = schema.safeParse(JSON.parse(json));
  if (result.success) return { data: result.data, errors: [] };
  return {
    data: undefined,
    errors: zodIssuesToFieldErrors("body", result.error!.issues as never).map((e) => `${e.pointer}: ${e.message}`),
  };
}

const bodies: [string, Schema, string][] = [
  ["project create", CreateProjectBody, '{"name":"p","labels":{LABELS}}'],
  ["project update", UpdateProjectBody, '{"labels":{LABELS}}'],
  ["sandbox create", CreateSandboxRequest, '{"name":"box","labels":{LABELS}}'],
  ["sandbox update", UpdateSandboxRequest, '{"labels":{LABELS}}'],
  ["policy create", CreatePolicyBody, '{"name":"p","cedar":"permit(principal,action,resource);","labels":{LABELS}}'],
  ["cluster update", UpdateClusterBody, '{"labels":{LABELS}}'],
  ["AWS connection create", CreateAwsConnectionBody, '{"name":"a","credentialId":"cred_1","labels":{LABELS}}'],
];

describe("labels, one schema for every resource", () => {
  it.each(bodies)("%s: a `__proto__` key is a 400 naming it, not silently dropped", (_name, schema, body) => {
    const { errors } = parse(schema, body.replace("{LABELS}", '{"__proto__":"x","team":"infra"}'));
    expect(errors).toContain("/body/labels/__proto__: `__proto__` is not a label key");
  });

  it.each(bodies)("%s: other keys that name Object members are kept as labels", (_name, schema, body) => {
    const { data, errors } = parse(schema, body.replace("{LABELS}", '{"constructor":"x","toString":"y"}'));
    if (errors.length) expect(errors.filter((e) => e.includes("/labels"))).toEqual([]);
    else expect((data as { labels: Record<string, string> }).labels).toEqual({ constructor: "x", toString: "y" });
  });

  it("refuses a key that is not a label name, and more than 64 labels", () => {
    const body = '{"name":"p","labels":{LABELS}}';
    expect(parse(CreateProjectBody, body.replace("{LABELS}", '{"-bad":"x"}')).errors).toEqual([
      "/body/labels/-bad: Not a label key: up to 63 letters, digits, '-', '_', '.' or '/', beginning and ending with a letter or digit",
    ]);
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"])));
    expect(parse(CreateProjectBody, body.replace("{LABELS}", many)).errors).toEqual([
      "/body/labels: at most 64 labels",
    ]);
  });
});
