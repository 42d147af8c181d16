import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import { EgressProxy } from "../src/egress/proxy.ts";
import { runCommand } from "../src/exec/run-command.ts";
import { requireSandboxCurl, startUpstreams, type Upstreams } from "./egress-fixture.ts";
import { newDriver, requireBwrap } from "./helpers.ts";

const bwrap = requireBwrap();
const curl = requireSandboxCurl();

/** Opens `n` CONNECT tunnels to registry.test:80 on fds 3.. and waits for each to be established. */
function holdTunnels(n: number): string {
  const lines: string[] = [];
  for (let fd = 3; fd < 3 + n; fd++) {
    lines.push(
      `exec ${fd}<>/dev/tcp/127.0.0.1/3128`,
      `printf 'CONNECT registry.test:80 HTTP/1.1\\r\\nHost: registry.test:80\\r\\n\\r\\n' >&${fd}`,
      `read -r line <&${fd}; case "$line" in *" 200 "*) ;; *) echo "tunnel ${fd}: $line"; exit 3;; esac`,
    );
  }
  return lines.join("\n");
}

describe.skipIf(!bwrap.available || !curl.available)(`egress connection limits${bwrap.reason}${curl.reason}`, () => {
  let upstreams: Upstreams;
  let proxy: EgressProxy;
  let driver: LocalDriver;
  const greedy = "sbx_egressgreedy";
  const neighbour = "sbx_egressneigh";

  beforeAll(async () => {
    upstreams = await startUpstreams();
    proxy = new EgressProxy({
      logger: silentLogger(),
      hostMap: upstreams.hostMap,
      maxConnections: 4,
      decide: async () => ({ allowed: true }),
    });
    driver = newDriver({ egress: proxy });
    await driver.start({ id: greedy, slug: "greedy-box", image: "default", env: {}, resources: {} });
    await driver.start({ id: neighbour, slug: "neighbour-box", image: "default", env: {}, resources: {} });
  });
  afterAll(async () => {
    await driver?.close();
    await proxy?.closeAll();
    await upstreams?.close();
  });

  const sh = (sandboxId: string, command: string) =>
    runCommand(driver, sandboxId, { argv: ["/bin/bash", "-c", command], timeoutMs: 20_000 });

  it("answers 429 past a sandbox's connection limit, serves a neighbour meanwhile, frees with a close", async () => {
    const dir = driver.workspaceDir(greedy);
    const greedyRun = sh(
      greedy,
      [
        holdTunnels(4),
        "curl -sS -D - -o /tmp/over.json -w '%{http_code}\\n' --max-time 10 http://registry.test/over",
        "cat /tmp/over.json; echo",
        "touch /workspace/held",
        "for i in $(seq 1 150); do [ -e /workspace/released ] && break; sleep 0.1; done",
        "exec 3>&- 4>&- 5>&- 6>&-",
        "sleep 0.3",
        "curl -sS --max-time 10 http://registry.test/after",
      ].join("\n"),
    );
    await vi.waitFor(() => expect(existsSync(join(dir, "held"))).toBe(true), { timeout: 15_000, interval: 50 });
    // The greedy sandbox sits at its limit: its neighbour's connections are its own.
    const other = await sh(
      neighbour,
      [holdTunnels(3), "curl -sS --max-time 10 http://registry.test/neighbour"].join("\n"),
    );
    writeFileSync(join(dir, "released"), "");
    expect(other.stdout).toBe("http saw /neighbour host=registry.test proxyauth=-");
    const out = (await greedyRun).stdout;
    expect(out).toMatch(/^HTTP\/1\.1 429 /m);
    expect(out).toMatch(/^retry-after: 1\r?$/im);
    expect(out).toMatch(/"detail":"This sandbox holds 4 egress connections already/);
    expect(out).toMatch(/http saw \/after host=registry.test/);
  }, 40_000);
});
