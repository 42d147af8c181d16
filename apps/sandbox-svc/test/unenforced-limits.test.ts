import type { Sandbox } from "@agentplane/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiFixture, apiFixture } from "./api-fixture.ts";
import { newDriver, requireBwrap, tempDataDir } from "./helpers.ts";

const bwrap = requireBwrap();

describe("a sandbox's limits on a host without cgroups", () => {
  let fx: ApiFixture;
  const base = "/v1/projects/prj_api/sandboxes";
  const api = () => fx.as({ type: "user", id: "usr_ada", displayName: "Ada" });
  beforeAll(async () => {
    // The real local driver, finding no cgroup hierarchy where it looks (an empty directory).
    fx = await apiFixture({ driver: newDriver({ cgroupRoot: tempDataDir() }) });
  });
  afterAll(async () => {
    await fx.close();
  });

  it("says which requested limits do not hold, on create, get and update", async () => {
    const box = await api()<Sandbox>("POST", base, {
      name: "limited",
      resources: { memoryMiB: 64, maxProcesses: 64 },
    });
    const said = {
      resources: ["memoryMiB", "maxProcesses"],
      reason: "cgroups unavailable on this host (no writable cgroup hierarchy)",
    };
    expect(box.unenforcedLimits).toEqual(said);
    expect((await api()<Sandbox>("GET", `${base}/${box.id}`)).unenforcedLimits).toEqual(said);

    const withDisk = await api()<Sandbox>("PATCH", `${base}/${box.id}`, {
      resources: { cpuMillicores: 500, diskMiB: 256 },
    });
    expect(withDisk.unenforcedLimits).toEqual({
      resources: ["cpuMillicores", "diskMiB"],
      reason: "cgroups unavailable on this host (no writable cgroup hierarchy); the local driver does not limit disk",
    });
    // No limits asked for: nothing to warn about.
    const unlimited = await api()<Sandbox>("PATCH", `${base}/${box.id}`, { resources: {} });
    expect(unlimited).not.toHaveProperty("unenforcedLimits");
    expect(await api()<Sandbox>("POST", base, { name: "plain" })).not.toHaveProperty("unenforcedLimits");
  });

  it.skipIf(!bwrap.available)(
    `runs the sandbox anyway, and still says so while it runs${bwrap.reason}`,
    async () => {
      const box = await api()<Sandbox>("POST", base, { name: "running", start: true, resources: { memoryMiB: 64 } });
      expect(box.state).toBe("running");
      expect(box.unenforcedLimits?.resources).toEqual(["memoryMiB"]);
      const listed = await api()<{ items: Sandbox[] }>("GET", base);
      expect(listed.items.find((s) => s.id === box.id)?.unenforcedLimits?.resources).toEqual(["memoryMiB"]);
      await api()("POST", `${base}/${box.id}/stop`);
    },
    60_000,
  );
});
