import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, envKey32, parseEnv } from "../src/config.ts";

const Schema = z.object({ MASTER_KEY: envKey32, OLD_KEY: envKey32.optional() });

describe("envKey32", () => {
  it("gives a base64 32-byte key as its bytes", () => {
    const key = randomBytes(32);
    const env = parseEnv(Schema, { MASTER_KEY: key.toString("base64") });
    expect(Buffer.from(env.MASTER_KEY).equals(key)).toBe(true);
    expect(env.OLD_KEY).toBeUndefined();
  });

  it("stops the start naming the variable for a key of another length", () => {
    const short = randomBytes(16).toString("base64");
    expect(() => parseEnv(Schema, { MASTER_KEY: randomBytes(32).toString("base64"), OLD_KEY: short })).toThrow(
      ConfigError,
    );
    expect(() => parseEnv(Schema, { MASTER_KEY: short })).toThrow(/MASTER_KEY: must be 32 bytes, base64-encoded/);
  });
});
