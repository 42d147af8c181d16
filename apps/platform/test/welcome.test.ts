import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalDriver } from "@agentplane/sandbox-svc";
import { silentLogger } from "@agentplane/service-kit";
import { describe, expect, it } from "vitest";
import { AllInOneEnvSchema } from "../src/config.ts";
import { welcomeLines } from "../src/welcome.ts";

const env = AllInOneEnvSchema.parse({});

function banner(searchPath: string[] | undefined, isolation?: "none", cgroupsUnavailable?: string) {
  const dir = mkdtempSync(join(tmpdir(), "welcome-"));
  const driver = new LocalDriver({
    dataDir: dir,
    logger: silentLogger(),
    ...(searchPath ? { searchPath } : {}),
    ...(isolation ? { isolation } : {}),
  });
  // What detection finds for a user who may write no cgroup hierarchy (any user but root, mostly),
  // or for one who may (root on this host), whatever this host allows the test.
  const cgroups = cgroupsUnavailable
    ? { version: "none", controllers: [], parents: {}, reason: cgroupsUnavailable }
    : { version: "v2", controllers: ["pids"], parents: { pids: dir } };
  Object.assign(driver, { cgroups });
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

  it("says resource limits are not enforced when no cgroup hierarchy is writable", () => {
    const text = banner(undefined, "none", "no writable cgroup hierarchy");
    expect(text).toMatch(/Sandboxes +resource limits not enforced here \(no writable cgroup hierarchy\)/);
  });

  it("says nothing of it when sandboxes can start", () => {
    // Without isolation nothing is needed; with bwrap on the machine (as in CI) neither.
    expect(banner(undefined, "none")).not.toContain("Sandboxes");
  });

  it("says why the agent runtime did not start and what moves it, instead of leaving its line out", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    const second = createServer();
    const err = await new Promise<Error>((resolve) => second.once("error", resolve).listen(port, "127.0.0.1"));
    taken.close();
    const text = welcomeLines({
      env: AllInOneEnvSchema.parse({ AGENT_RUNTIME_PORT: String(port) }),
      dataDir: "/data",
      platform: { publicUrl: "http://localhost:8080", setupCode: undefined, services: {} },
      runtimeError: err,
    }).join("\n");
    expect(text).toContain(
      `  Agent runtime  not started: port ${port} is already in use: set AGENT_RUNTIME_PORT to a free port\n`,
    );
    expect(text).toContain("AGENT_RUNTIME=off");
    const other = welcomeLines({
      env,
      dataDir: "/data",
      platform: { publicUrl: "http://localhost:8080", setupCode: undefined, services: {} },
      runtimeError: new Error("GATEWAY_API_URL is not a URL"),
    }).join("\n");
    expect(other).toContain("  Agent runtime  not started: GATEWAY_API_URL is not a URL\n");
  });
});
