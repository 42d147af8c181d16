import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

describe("auth, credentials and the output contract against the real platform", () => {
  let a: TestPlatform;
  // The second installation is the same platform under another host name (localhost instead of
  // 127.0.0.1): the store keys by host, so it holds a second, different token for it.
  let b: { url: string; ownerToken: string };
  const config = tempConfigDir();
  let env: Record<string, string>;
  let orgId = "";

  beforeAll(async () => {
    a = await startTestPlatform();
    env = { AGENTPLANE_CONFIG_DIR: config.dir };
    const sdk = createAgentplaneClient({ baseUrl: a.url, token: a.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Only-on-B" } });
    const token = await sdk.request("createApiToken", { path: { orgId: org.id }, body: { name: "b", role: "admin" } });
    b = { url: a.url.replace("127.0.0.1", "localhost"), ownerToken: token.token };
    orgId = org.id;
  }, 120_000);
  afterAll(async () => {
    await a?.close();
    config.remove();
  });

  it("asks for a login with exit 4 before there is a token", async () => {
    const none = await runCli(["orgs", "list"], { ...env, AGENTPLANE_URL: a.url });
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/not logged in to 127\.0\.0\.1:\d+: run `agentplane auth login`/);
  });

  it("logs in with a token from stdin into files only the owner can read", async () => {
    const login = await runCli(["auth", "login", "--with-token", "--url", a.url], env, `${a.ownerToken}\n`);
    expect(login.stderr).toContain("Logged in to");
    expect(login.code).toBe(0);
    expect(statSync(config.dir).mode & 0o777).toBe(0o700);
    for (const file of ["hosts.json", "config.json"]) expect(statSync(join(config.dir, file)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(config.dir, "hosts.json"), "utf8")).toContain(a.ownerToken);
    const token = await runCli(["auth", "token"], env);
    expect(token.stdout).toBe(`${a.ownerToken}\n`);
    const status = await runCli(["auth", "status", "--json"], env);
    const rows = JSON.parse(status.stdout) as { status: string; token: string; tokenSource: string }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "ok", tokenSource: "store" });
    // The status masks the token: it is never printed where it was not asked for.
    expect(status.stdout).not.toContain(a.ownerToken);
  });

  it("keeps two installations side by side, chosen by --url or AGENTPLANE_URL", async () => {
    await runCli(["auth", "login", "--with-token", "--url", b.url], env, b.ownerToken);
    const onA = await runCli(["auth", "token"], { ...env, AGENTPLANE_URL: a.url });
    const onB = await runCli(["auth", "token", "--url", b.url], env);
    expect(onA.stdout).toBe(`${a.ownerToken}\n`);
    expect(onB.stdout).toBe(`${b.ownerToken}\n`);
    // The token stored for B is bound to B's organization: it sees that one only.
    const orgs = await runCli(["orgs", "list", "--json", "name"], { ...env, AGENTPLANE_URL: b.url });
    expect(JSON.parse(orgs.stdout)).toEqual([{ name: "Only-on-B" }]);
    const status = JSON.parse((await runCli(["auth", "status", "--json"], env)).stdout) as unknown[];
    expect(status).toHaveLength(2);
  });

  it("lets AGENTPLANE_TOKEN beat the stored token", async () => {
    const refused = await runCli(["orgs", "list"], {
      ...env,
      AGENTPLANE_URL: a.url,
      AGENTPLANE_TOKEN: "apl_not_a_token",
    });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(
      /^error: Unauthenticated: .*\(request id [\w-]+\)\n {2}the token in AGENTPLANE_TOKEN was refused: .*\n$/,
    );
  });

  it("prints tables on a terminal, tab-separated lines to a pipe, JSON and jq on request", async () => {
    const base = { ...env, AGENTPLANE_URL: a.url };
    orgId = JSON.parse((await runCli(["orgs", "create", "--name", "Acme", "--json"], base)).stdout).id;
    // A name holds no control characters (the API refuses them); a description may hold a tab.
    for (const [name, description] of [
      ["alpha", "first"],
      ["beta", "with\ttab"],
    ] as const) {
      const created = await runCli(
        ["projects", "create", "--org", orgId, "--name", name, "--description", description],
        base,
      );
      expect(created.code).toBe(0);
    }
    const withOrg = { ...base, AGENTPLANE_ORG: orgId };
    const piped = await runInProcess(["projects", "list"], withOrg);
    // Only the final newline goes: an empty last column leaves a trailing tab that must stay.
    const lines = piped.stdout.replace(/\n$/, "").split("\n");
    expect(lines).toHaveLength(2);
    // Tab-separated, one field per column, RFC 3339 times, the tab inside a value flattened.
    expect(lines.every((l) => l.split("\t").length === lines[0]!.split("\t").length)).toBe(true);
    expect(piped.stdout).toMatch(/\t\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/);
    expect(piped.stdout).toContain("with tab");

    const tty = await runInProcess(["projects", "list"], withOrg, true);
    expect(tty.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+/);
    expect(tty.stdout).toMatch(/(seconds?|minutes?) ago|now/);
    expect(tty.stdout).not.toContain("\t");

    const json = JSON.parse((await runInProcess(["projects", "list", "--json"], withOrg)).stdout) as { name: string }[];
    expect(json.map((p) => p.name).sort()).toEqual(["alpha", "beta"]);
    const fields = JSON.parse((await runInProcess(["projects", "list", "--json", "name"], withOrg)).stdout);
    expect(fields).toEqual(expect.arrayContaining([{ name: "alpha" }]));
    expect(Object.keys(fields[0])).toEqual(["name"]);
    const jq = await runInProcess(["projects", "list", "--jq", ".[].name"], withOrg);
    expect(jq.stdout.split("\n").sort()).toEqual(["", "alpha", "beta"]);
    const descriptions = await runInProcess(["projects", "list", "--jq", ".[].description"], withOrg);
    expect(descriptions.stdout.split("\n").sort()).toEqual(["", "first", "with\ttab"]);
    const unknownField = await runInProcess(["projects", "list", "--json", "nmae"], withOrg);
    expect(unknownField.code).toBe(1);
    expect(unknownField.stderr).toMatch(/unknown JSON field nmae; available: .*name/);

    const get = await runInProcess(["orgs", "get", orgId], base);
    expect(get.stdout).toContain(`id\t${orgId}\n`);
    const getTty = await runInProcess(["orgs", "get", orgId, "--jq", ".name"], base, true);
    expect(getTty.stdout).toBe("Acme\n");
  });

  it("picks the only organization without being told, and maps API errors to exit codes", async () => {
    const viewer = JSON.parse(
      (
        await runCli(["tokens", "create", "--name", "v", "--role", "viewer", "--json"], {
          ...env,
          AGENTPLANE_URL: a.url,
          AGENTPLANE_ORG: orgId,
        })
      ).stdout,
    ) as { token: string };
    // A token bound to one organization sees only that one: no --org needed.
    const projects = await runCli(["projects", "list", "--json", "name"], {
      ...env,
      AGENTPLANE_URL: a.url,
      AGENTPLANE_TOKEN: viewer.token,
    });
    expect(projects.code).toBe(0);
    expect(projects.stdout).toContain("alpha");
    const notFound = await runCli(["projects", "get", "prj_missing", "--json"], { ...env, AGENTPLANE_URL: a.url });
    expect(notFound.code).toBe(3);
    expect(JSON.parse(notFound.stdout)).toMatchObject({ status: 404 });
    expect(notFound.stderr).toMatch(/Not Found/);
    const denied = await runCli(["projects", "create", "--name", "x"], {
      ...env,
      AGENTPLANE_URL: a.url,
      AGENTPLANE_TOKEN: viewer.token,
    });
    expect(denied.code).toBe(3);
    const unconfirmed = await runCli(["projects", "delete", "prj_x"], { ...env, AGENTPLANE_URL: a.url });
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toMatch(/pass --yes/);
  });

  it("reaches any path with `api`, paginating when asked", async () => {
    const base = { ...env, AGENTPLANE_URL: a.url };
    const page = await runCli(
      ["api", "GET", `/v1/orgs/${orgId}/projects`, "-f", "limit=1", "--paginate", "--jq", "length"],
      base,
    );
    expect(page.stdout).toBe("2\n");
    const created = await runCli(
      ["api", "POST", `/v1/orgs/${orgId}/projects`, "-f", "name=gamma", "--jq", ".name"],
      base,
    );
    expect(created.stdout).toBe("gamma\n");
  });

  it("logs out, forgetting the token", async () => {
    const out = await runCli(["auth", "logout", "--url", b.url], env);
    expect(out.code).toBe(0);
    expect(readFileSync(join(config.dir, "hosts.json"), "utf8")).not.toContain(b.ownerToken);
    expect((await runCli(["orgs", "list"], { ...env, AGENTPLANE_URL: b.url })).code).toBe(4);
  });

  it("logs in with a token restricted to model calls and says what it is, instead of refusing it", async () => {
    const sdk = createAgentplaneClient({ baseUrl: a.url, token: a.ownerToken });
    const projectId = (await sdk.request("createProject", { path: { orgId }, body: { name: "models" } })).id;
    const scoped = await sdk.request("createApiToken", {
      path: { orgId },
      body: { name: "ci models", projectId, scopes: ["llm:invoke"] },
    });
    const own = tempConfigDir();
    try {
      const scopedEnv = { AGENTPLANE_CONFIG_DIR: own.dir };
      const child = await runCli(["auth", "login", "--with-token", "--url", a.url], scopedEnv, scoped.token);
      expect(child.stderr).toContain("as a token restricted to llm:invoke");
      expect(child.code).toBe(0);
      const status = await runInProcess(["auth", "status", "--json", "status,principal"], {
        ...scopedEnv,
        AGENTPLANE_TOKEN: scoped.token,
      });
      expect(JSON.parse(status.stdout)).toEqual([{ status: "ok", principal: "a token restricted to llm:invoke" }]);
      expect(status.code).toBe(0);
      // A token the installation does not take is still refused, exit 4.
      const wrong = await runInProcess(["auth", "status"], { ...scopedEnv, AGENTPLANE_TOKEN: "apl_x_y" });
      expect(wrong.code).toBe(4);
    } finally {
      own.remove();
    }
  });
});
