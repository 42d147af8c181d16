import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const longest = (text: string) => Math.max(...text.split("\n").map((line) => line.length));

describe("output for people: help, the audit trail, tokens and usage totals on 80 columns, refused flags", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;

  beforeAll(async () => {
    p = await startTestPlatform();
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const orgId = (await sdk.request("createOrganization", { body: { name: "Acme" } })).id;
    const projectId = (await sdk.request("createProject", { path: { orgId }, body: { name: "p" } })).id;
    await sdk.request("createProjectPolicy", {
      path: { projectId },
      body: { name: "all", cedar: "permit(principal, action, resource);" },
    });
    env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: p.url,
      AGENTPLANE_TOKEN: p.ownerToken,
      AGENTPLANE_ORG: orgId,
      AGENTPLANE_PROJECT: projectId,
    };
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it("wraps help at the terminal's width, and at 100 columns in pipes (the generated docs)", async () => {
    const narrow = await runInProcess(["sandboxes", "--help"], env, true, 80);
    expect(narrow.code).toBe(0);
    expect(longest(narrow.stdout)).toBeLessThanOrEqual(80);
    expect(narrow.stdout).toMatch(/effective-policy \[options\] <sandbox> +The bindings that reach a sandbox and\n/);
    const piped = await runInProcess(["sandboxes", "--help"], env);
    expect(longest(piped.stdout)).toBeGreaterThan(80);
    expect(longest(piped.stdout)).toBeLessThanOrEqual(100);
  });

  it("shows the audit trail's time, action and outcome whole on a terminal; pipes keep every column", async () => {
    let piped = "";
    await expect
      .poll(
        async () => {
          piped = (await runInProcess(["audit", "list", "--limit", "50"], env)).stdout;
          return piped;
        },
        { timeout: 15_000 },
      )
      .toContain("createProjectPolicy");
    const row = piped.split("\n").find((l) => l.includes("\tcreateProjectPolicy\t"))!;
    expect(row.split("\t")).toHaveLength(6);
    const table = await runInProcess(["audit", "list", "--limit", "50"], env, true, 80);
    const [head, ...lines] = table.stdout.trimEnd().split("\n");
    expect(head).toMatch(/^TIME\s+ACTION\s+OUTCOME\s+STATUS$/);
    expect(lines.find((l) => l.includes("createProjectPolicy"))).toMatch(
      /^(now|\d+ seconds? ago)\s+createProjectPolicy\s+success\s+201$/,
    );
    expect(longest(table.stdout)).toBeLessThanOrEqual(80);
  });

  it("lists tokens on 80 columns with every id whole, the columns that do not fit left out from the right", async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    for (const name of ["deploy-bot", "nightly"]) {
      await sdk.request("createApiToken", { path: { orgId: env.AGENTPLANE_ORG! }, body: { name } });
    }
    const listed = JSON.parse((await runInProcess(["tokens", "list", "--json"], env)).stdout) as Array<{
      id: string;
      name: string;
      orgId: string;
    }>;
    expect(listed.length).toBeGreaterThanOrEqual(2);
    const table = await runInProcess(["tokens", "list"], env, true, 80);
    const [head, ...lines] = table.stdout.trimEnd().split("\n");
    expect(head).toMatch(/^ID\s+NAME\s+ROLE\s+CREATED AT\s+REVOKED AT$/);
    expect(lines).toHaveLength(listed.length);
    for (const token of listed) {
      // Copied from the table, the id is the token's: nothing cut from it, nothing after it but spaces.
      const line = lines.find((l) => l.startsWith(`${token.id} `));
      expect(line, token.id).toMatch(new RegExp(`^${token.id}\\s+${token.name}\\s`));
    }
    expect(table.stdout).not.toContain("…");
    expect(table.stdout).not.toContain(listed[0]!.orgId);
    expect(longest(table.stdout)).toBeLessThanOrEqual(80);
    // A terminal wide enough shows every column.
    const wide = await runInProcess(["tokens", "list"], env, true, 200);
    expect(wide.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+ROLE\s+CREATED AT\s+ORG ID\s+USER ID\s+REVOKED AT$/);
    expect(wide.stdout).toContain(listed[0]!.orgId);
  });

  it("prints usage totals as lines of their own on a terminal, not as a JSON cell", async () => {
    const out = await runInProcess(["usage", "list"], env, true, 80);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^total:\n {2}requests: +0\n/m);
    expect(out.stdout).not.toContain("{");
    expect(longest(out.stdout)).toBeLessThanOrEqual(80);
    const json = JSON.parse((await runInProcess(["usage", "list", "--json"], env)).stdout);
    expect(json.total).toMatchObject({ requests: 0, costUsd: 0 });
  });

  it("names the flag a refused field came from, and the API's pointer for a body from --input", async () => {
    const empty = await runInProcess(["projects", "create", "--name", ""], env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/^error: Validation Failed: .*\n {2}--name: \S/);
    const limit = await runInProcess(["audit", "list", "--limit", "0"], env);
    expect(limit.stderr).toMatch(/\n {2}--limit: \S/);
    // A body read from a file names no flag: the pointer into that body says where.
    const fromFile = await runCli(["projects", "create", "--input", "-"], env, '{"name":""}');
    expect(fromFile.code).toBe(1);
    expect(fromFile.stderr).toMatch(/\n {2}\/body\/name: \S/);
  });
});
