import { ConfigError, ENV_BOOLEAN_VALUES, parseEnv } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { DEPLOYABLES } from "../src/config-reference.ts";

/** The allowed values of a variable's schema when it is an enumeration (through defaults and pipes). */
function enumValues(schema: z.ZodType): string[] | undefined {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
  switch (def.type) {
    case "enum":
      return Object.values(def.entries as Record<string, string>);
    case "optional":
    case "default":
    case "prefault":
    case "nullable":
    case "readonly":
      return enumValues(def.innerType as z.ZodType);
    case "pipe":
      return enumValues(def.out as z.ZodType) ?? enumValues(def.in as z.ZodType);
    default:
      return undefined;
  }
}

const variables = DEPLOYABLES.flatMap((d) =>
  Object.entries((d.schema as unknown as z.ZodObject).shape as Record<string, z.ZodType>).map(([name, schema]) => ({
    deployable: d.name,
    name,
    values: enumValues(schema),
  })),
);
const enums = variables.filter((v) => v.values !== undefined) as {
  deployable: string;
  name: string;
  values: string[];
}[];

// Names that say the variable picks one of a fixed set of options.
const CHOOSES = /(^|_)(PROVIDER|DRIVER|MODE|ISOLATION|LEVEL|ENVIRONMENT)$/;

describe("every enumerated setting of every deployable refuses an unknown value at start", () => {
  it("treats the settings that pick an option as enumerations", () => {
    const named = new Set(enums.map((v) => `${v.deployable}:${v.name}`));
    for (const expected of [
      "agent-runtime:LLM_PROVIDER",
      "agent-runtime:LOG_LEVEL",
      "agent-runtime:CHAT_MODE",
      "all-in-one:LOG_LEVEL",
      "all-in-one:SANDBOX_DRIVER",
      "all-in-one:AGENT_RUNTIME",
      "agent-runtime:CHAT_ALLOW_BOTS",
      "sandbox-svc:SANDBOX_K8S_DIAL_POD_IP",
      "sandbox-svc:SANDBOX_K8S_READ_ONLY_ROOT",
      "api-gateway:LOG_LEVEL",
      "tenancy-svc:LOG_LEVEL",
      "sandbox-svc:SANDBOX_DRIVER",
      "sandbox-svc:SANDBOX_LOCAL_ISOLATION",
      "cluster-relay:LOG_LEVEL",
      "api-gateway:OIDC_EMAIL_TRUST",
      "tenancy-svc:OIDC_EMAIL_TRUST",
      "all-in-one:OIDC_EMAIL_TRUST",
    ]) {
      expect(named, expected).toContain(expected);
    }
    const loose = variables.filter((v) => CHOOSES.test(v.name) && v.values === undefined);
    expect(loose.map((v) => `${v.deployable}:${v.name}`)).toEqual([]);
  });

  it("reads every on/off setting with envBoolean, not an enumeration of its own", () => {
    const booleanWords = new Set<string>(ENV_BOOLEAN_VALUES);
    const handRolled = enums.filter(
      (v) => v.values.every((value) => booleanWords.has(value)) && v.values.length < ENV_BOOLEAN_VALUES.length,
    );
    expect(handRolled.map((v) => `${v.deployable}:${v.name}`)).toEqual([]);
  });

  it.each(enums.map((v) => [`${v.deployable}:${v.name}`, v] as const))(
    "%s: an unknown value is an error naming the variable and the allowed values",
    (_, v) => {
      let error: unknown;
      try {
        parseEnv(DEPLOYABLES.find((d) => d.name === v.deployable)!.schema, { [v.name]: "no-such-value" });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const line = (error as Error).message.split("; ").find((part) => part.includes(`${v.name}: `));
      expect(line, (error as Error).message).toBeDefined();
      for (const value of v.values) expect(line).toContain(value);
    },
  );

  it("keeps the default when unset: LLM_PROVIDER is cloud-a, LOG_LEVEL info", () => {
    const runtime = DEPLOYABLES.find((d) => d.name === "agent-runtime")!.schema;
    expect(parseEnv(runtime, {})).toMatchObject({ LLM_PROVIDER: "cloud-a", LOG_LEVEL: "info" });
    expect(parseEnv(runtime, { LLM_PROVIDER: "cloud-b" })).toMatchObject({ LLM_PROVIDER: "cloud-b" });
  });
});
