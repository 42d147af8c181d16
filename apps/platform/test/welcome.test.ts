import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalDriver } from "@agentplane/sandbox-svc";
import { silentLogger } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import { AllInOneEnvSchema } from "../src/config.ts";
import { welcomeLines } from "../src/welcome.ts";

const env = AllInOneEnvSchema.parse({});

function banner(searchPath: string[] | undefined, isolation?: "none") {
  const dir = mkdtempSync(join(tmpdir(), "welcome-"));
  const driver = new LocalDriver({
    dataDir: dir,
    logger: silentLogger(),
    ...(searchPath ? { searchPath } : {}),
    ...(isolation ? { isolation } : {}),
  });
  return welcomeLines({
    env,
    dataDir: dir,
    platform: { publicUrl: "http://localhost:8080", setupCode: undefined, services: { sandbox: { driver } as never } },
  }).join("\n");
}

describe("the start banner", () => {
  it("says sandboxes need bubblewrap when it is missing", () => {
    const text = banner([mkdtempSync(join(tmpdir(), "no-bwrap-"))]);
    expect(text).toMatch(/Sandboxes +cannot start yet: .*bubblewrap/);
  });

  it("says nothing of it when sandboxes can start", () => {
    // Without isolation nothing is needed; with bwrap on the machine (as in CI) neither.
    expect(banner(undefined, "none")).not.toContain("Sandboxes");
  });
});
