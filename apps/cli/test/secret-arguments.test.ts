// A secret typed as a flag is readable by every user of the machine in the process list while the
// command runs: the CLI says so, and names --input, which keeps it out.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPERATIONS } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREDENTIAL_FIELDS } from "../../../packages/contracts/src/governance/credentials.ts";
import { COMMANDS } from "../src/command-map.ts";
import { CREDENTIAL_SECRET_FIELDS, SECRET_FIELDS } from "../src/secret-flags.ts";
import { runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const SECRET = "sk-typed-on-the-command-line";

describe("secrets given on the command line", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;

  beforeAll(async () => {
    p = await startTestPlatform();
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: p.url, AGENTPLANE_TOKEN: p.ownerToken };
    const org = JSON.parse((await runInProcess(["orgs", "create", "--name", "Acme", "--json", "id"], env)).stdout);
    expect((await runInProcess(["config", "set", "org", org.id], env)).code).toBe(0);
    const project = JSON.parse((await runInProcess(["projects", "create", "--name", "p", "--json", "id"], env)).stdout);
    expect((await runInProcess(["config", "set", "project", project.id], env)).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it("warns when a credential's secret is a -f field, naming --input, and still stores it", async () => {
    const ran = await runInProcess(
      ["credentials", "create", "--name", "ci", "--kind", "http-bearer", "-f", `token=${SECRET}`, "--json", "kind"],
      env,
    );
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ kind: "http-bearer" });
    expect(ran.stderr).toMatch(/^warning: -f token=… put a secret in the command line, .*--input - \(stdin\)/);
    expect(ran.stderr).not.toContain(SECRET);
  });

  it("warns of a connector's header values given as --headers", async () => {
    const ran = await runInProcess(
      [
        "connectors",
        "create",
        "--name",
        "mcp",
        "-f",
        "url=http://127.0.0.1:1/mcp",
        "--headers",
        `{"X-Api-Key":"${SECRET}"}`,
      ],
      env,
    );
    expect(ran.stderr).toContain("warning: --headers put a secret in the command line");
    expect(ran.stderr).not.toContain(SECRET);
  });

  it("says nothing when the secret comes in a file, nor for fields that are no secret", async () => {
    const body = join(config.dir, "credential.json");
    writeFileSync(body, JSON.stringify({ token: SECRET }), { mode: 0o600 });
    const fromFile = await runInProcess(
      ["credentials", "create", "--name", "ci2", "--kind", "http-bearer", "--input", body, "--json", "kind"],
      env,
    );
    expect(fromFile.code).toBe(0);
    expect(fromFile.stderr).toBe("");
    const plain = await runInProcess(
      ["projects", "create", "--name", "q", "-f", "description=x", "--json", "name"],
      env,
    );
    expect(plain.stderr).toBe("");
  });

  it("lists the contracts' secret credential fields, and only fields the commands' bodies take", () => {
    const secret = new Set(Object.values(CREDENTIAL_FIELDS).flatMap((f) => f.secret));
    expect(new Set(CREDENTIAL_SECRET_FIELDS)).toEqual(secret);
    const commandOf = Object.fromEntries(Object.entries(COMMANDS).map(([id, path]) => [path, id]));
    for (const [path, fields] of Object.entries(SECRET_FIELDS)) {
      const op = OPERATIONS.find((o) => o.id === commandOf[path]);
      expect(op?.body, path).toBeDefined();
      // Credential bodies take any field of the kind (checked per kind by the API).
      if (path.startsWith("credentials ")) continue;
      for (const field of fields)
        expect(
          op?.body?.fields.map((f) => f.name),
          path,
        ).toContain(field);
    }
  });
});
