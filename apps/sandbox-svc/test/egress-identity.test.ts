import { createLogger, generateInternalKeys, servicePrincipal, signIdentity } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import { egressIdentityKeys } from "../src/egress/identity.ts";

/** A real logger whose lines the test reads. */
function recordingLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger("egress-proxy", "info", { write: (line) => lines.push(line) }) };
}

/** The protected header of a token the keys sign. */
const sign = async (keys: Awaited<ReturnType<typeof egressIdentityKeys>>) => {
  const token = await signIdentity(keys, servicePrincipal("sandbox"), { audience: "governance" });
  return JSON.parse(Buffer.from(token.split(".")[0] as string, "base64url").toString("utf8")) as unknown;
};

describe("the egress proxy's identity keys (decision 0062)", () => {
  it("signs with its own key, named in kid, and leaves a shared private key beside it unread", async () => {
    const [own, shared] = [await generateInternalKeys(), await generateInternalKeys()];
    const { lines, logger } = recordingLogger();
    const keys = await egressIdentityKeys(
      {
        EGRESS_IDENTITY_PRIVATE_KEY: JSON.stringify(own.privateJwk),
        INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(shared.privateJwk),
      },
      logger,
    );
    expect(keys.keyId).toBe("egress");
    expect(await sign(keys)).toEqual({ alg: "EdDSA", kid: "egress" });
    expect(lines).toEqual([]);
  });

  it("falls back to the shared key without its own, as before, and says so", async () => {
    const shared = await generateInternalKeys();
    const { lines, logger } = recordingLogger();
    const keys = await egressIdentityKeys({ INTERNAL_IDENTITY_PRIVATE_KEY: JSON.stringify(shared.privateJwk) }, logger);
    expect(keys.keyId).toBeUndefined();
    expect(await sign(keys)).toEqual({ alg: "EdDSA" });
    expect(lines.join("")).toMatch(/EGRESS_IDENTITY_PRIVATE_KEY is not set/);
  });

  it("refuses to start with neither key, or a bad one, naming the variable", async () => {
    const { logger } = recordingLogger();
    await expect(egressIdentityKeys({}, logger)).rejects.toThrow(/EGRESS_IDENTITY_PRIVATE_KEY/);
    await expect(egressIdentityKeys({ EGRESS_IDENTITY_PRIVATE_KEY: "{" }, logger)).rejects.toThrow(
      /EGRESS_IDENTITY_PRIVATE_KEY/,
    );
  });
});
