import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, ENV_BOOLEAN_VALUES, envBoolean, parseEnv } from "../src/config.ts";

const Schema = z.object({
  FEATURE: envBoolean.optional(),
  ENABLED_BY_DEFAULT: envBoolean.prefault("on"),
});

function startError(env: Record<string, string>): ConfigError {
  try {
    parseEnv(Schema, env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`parsed ${JSON.stringify(env)} without an error`);
}

describe("envBoolean", () => {
  it.each([
    ["true", true],
    ["1", true],
    ["yes", true],
    ["on", true],
    ["false", false],
    ["0", false],
    ["no", false],
    ["off", false],
    ["TRUE", true],
    ["Off", false],
    [" yes ", true],
    ["\tNO\n", false],
  ])("reads %j as %s", (value, expected) => {
    expect(parseEnv(Schema, { FEATURE: value }).FEATURE).toBe(expected);
  });

  it.each(["ture", "enabled", "2", "-1", "y", "n", "truee", "t", "disabled"])(
    "refuses %j, naming the variable and every allowed value",
    (value) => {
      const error = startError({ FEATURE: value });
      expect(error.variables).toEqual(["FEATURE"]);
      expect(error.message).toMatch(/^invalid configuration: FEATURE: must be one of /);
      for (const allowed of ENV_BOOLEAN_VALUES) expect(error.message).toContain(allowed);
    },
  );

  it("is unset when empty, and takes its default then", () => {
    expect(parseEnv(Schema, {})).toEqual({ ENABLED_BY_DEFAULT: true });
    expect(parseEnv(Schema, { FEATURE: "", ENABLED_BY_DEFAULT: "" })).toEqual({ ENABLED_BY_DEFAULT: true });
    expect(parseEnv(Schema, { ENABLED_BY_DEFAULT: "off" })).toEqual({ ENABLED_BY_DEFAULT: false });
  });

  it("refuses a blank value rather than reading it as false", () => {
    expect(startError({ FEATURE: "   " }).variables).toEqual(["FEATURE"]);
  });

  it("names each bad variable when several are wrong", () => {
    expect(startError({ FEATURE: "enabled", ENABLED_BY_DEFAULT: "2" }).variables.sort()).toEqual([
      "ENABLED_BY_DEFAULT",
      "FEATURE",
    ]);
  });

  it("shows its allowed values as the input side of a JSON Schema (the configuration reference)", () => {
    const json = z.toJSONSchema(Schema, { io: "input", unrepresentable: "any" }) as {
      properties: Record<string, { enum?: string[]; default?: unknown }>;
    };
    expect(json.properties.FEATURE?.enum).toEqual([...ENV_BOOLEAN_VALUES]);
    expect(json.properties.ENABLED_BY_DEFAULT).toMatchObject({ enum: [...ENV_BOOLEAN_VALUES], default: "on" });
  });
});
